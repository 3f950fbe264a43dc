// Runs in the SQLite pass only: its subject is the CLI,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type CommandRun,
  CONTROL_PLANE_FIXTURES,
  type ControlPlane,
  freePort,
  newDataDir,
  REPO_ROOT,
  runBerth,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";

/** A copy of the deploy-app fixture in a folder named `name`, with `extra` files written over it. */
function project(name: string, extra: Record<string, string> = {}): string {
  const dir = join(newDataDir("berth-cli-errors-"), name);
  cpSync(join(CONTROL_PLANE_FIXTURES, "deploy-app"), dir, { recursive: true });
  for (const [path, content] of Object.entries(extra)) writeFileSync(join(dir, path), content);
  return dir;
}

/** How many times `text` occurs in `output`. */
const occurrences = (output: string, text: string) => output.split(text).length - 1;

describe("what the remote commands print when the control plane refuses them or cannot be reached", () => {
  let cp: ControlPlane;
  /** `berth` in an empty folder (no .berth/control-plane/admin.key there) with a home of its own; `env` over no connection. */
  let berth: (args: string[], env?: Record<string, string>) => Promise<CommandRun>;

  before(async () => {
    cp = await startControlPlane({ listener: true });
    const cwd = newDataDir("berth-cli-errors-cwd-");
    const home = newDataDir("berth-cli-errors-home-");
    berth = (args, extra = {}) => {
      const env: Record<string, string | undefined> = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "xdg") };
      for (const variable of ["BERTH_URL", "BERTH_API_KEY", "BERTH_TENANT_ID"]) delete env[variable];
      return runBerth(args, { cwd, env: { ...env, ...extra }, input: "" });
    };
  });
  after(() => cp?.stop());

  const connected = () => ({ BERTH_URL: cp.url, BERTH_API_KEY: cp.adminKey, BERTH_TENANT_ID: cp.defaultTenantId });

  test("a 401 names the key refused, or that none was sent, and where keys come from", async () => {
    const refused = await berth(["deployments", "list"], { BERTH_URL: cp.url, BERTH_API_KEY: "berth_not-a-key" });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`${cp.url} refused the key in BERTH_API_KEY \\(`));
    const none = await berth(["deployments", "list", "--url", cp.url]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /needs an API key and none was sent/);
    for (const run of [refused, none]) {
      assert.match(run.stderr, /berth login --url <url>/);
      assert.match(run.stderr, /\.berth\/control-plane\/admin\.key/);
      assert.match(run.stderr, /berth control-plane keys create --tenant <id>/);
      assert.doesNotMatch(run.stderr, /\{"detail"/);
    }
  });

  test("a refused connection names the URL tried, where it came from, and how to name another", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const byEnv = await berth(["deployments", "list"], { BERTH_URL: url, BERTH_API_KEY: "key" });
    assert.equal(byEnv.code, 1);
    assert.match(byEnv.stderr, new RegExp(`cannot reach the control plane at ${url} \\(from BERTH_URL\\): ECONNREFUSED`));
    assert.match(byEnv.stderr, /--url <url>, BERTH_URL, or `berth login --url <url>`/);
    const byFlag = await berth(["revisions", "list", "agent", "--url", url]);
    assert.match(byFlag.stderr, new RegExp(`at ${url} \\(given with --url\\)`));
    const byDefault = await berth(["deployments", "list"]);
    assert.match(byDefault.stderr, /at http:\/\/127\.0\.0\.1:8000 \(the default\)|needs an API key/);
  });

  test("a 422 prints one sentence per field, not the JSON list", async () => {
    const run = await berth(["deployments", "list", "--limit", "1000"], connected());
    assert.equal(run.code, 1);
    assert.match(run.stderr, /the control plane refused the request \(422\):\n {2}query parameter limit: .+\.\n/);
    const named = await berth(["deploy", project("errors-app"), "--name", "not a name!"], connected());
    assert.equal(named.code, 1);
    assert.match(named.stderr, /^ {2}field name: must be .+\.$/m);
    for (const output of [run.stderr, named.stderr]) assert.doesNotMatch(output, /"loc"|\{"detail"|\[\{/);
  });

  test("deploy prints langgraph.json's warnings before uploading, and refuses an invalid one", async () => {
    const name = uniqueName("cli-warned");
    const dir = project(name, {
      "langgraph.json": JSON.stringify({
        graphs: { agent: "./agent.ts:graph" },
        python_version: "3.12",
        graph_typo: true,
      }),
    });
    const run = await berth(["deploy", dir], connected());
    assert.equal(run.code, 0, run.stderr);
    const warned = run.stderr.indexOf('berth deploy: warning: langgraph.json: unknown key "graph_typo" is ignored');
    assert.ok(warned >= 0, run.stderr);
    assert.match(
      run.stderr,
      /^berth deploy: warning: langgraph\.json: "python_version" is ignored \(a setting of Python projects\)$/m,
    );
    assert.ok(warned < run.stderr.indexOf("uploaded"), "before the upload");
    assert.ok(!run.stderr.includes(dir), "the project's own paths, relative");

    const invalid = project(uniqueName("cli-invalid"), { "langgraph.json": JSON.stringify({ graphs: {} }) });
    const refused = await berth(["deploy", invalid], connected());
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^berth deploy: langgraph\.json is invalid: graphs: at least one graph is required$/m);
    assert.doesNotMatch(refused.stderr, /packed|uploaded|created deployment/);
  });

  test("a graph that throws in the build is reported once, with the file and line of the throw", async () => {
    const dir = project(uniqueName("cli-throws"), {
      "settings.ts": 'export function requireKey(): string {\n  throw new Error("the model key is missing");\n}\n',
      "agent.ts": 'import { requireKey } from "./settings.ts";\n\nrequireKey();\nexport const graph = 1;\n',
    });
    const run = await berth(["deploy", dir], connected());
    assert.equal(run.code, 1, run.stderr);
    assert.equal(occurrences(run.stderr, "the model key is missing"), 1, run.stderr);
    assert.match(
      run.stderr,
      /ended BUILD_FAILED: A graph failed to load: failed to load graph "agent" from agent\.ts \(export "graph"\): the model key is missing \(at settings\.ts:2:9\)/,
    );
    assert.doesNotMatch(run.stderr, /last \d+ build log lines/, "the build log was printed as it came");
    for (const internal of [REPO_ROOT, cp.dataDir, "/app/", "node_modules"]) assert.ok(!run.stderr.includes(internal), internal);
  });

  test("a graph that loads in the build but throws when the server starts is reported once", async () => {
    // Fails its first load only (the server the build starts), passes the build's check, fails nothing else.
    const marker = `berth-first-load-${uniqueName("marker")}`;
    const dir = project(uniqueName("cli-start-fails"), {
      "first-load.ts": `import { existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const marker = join(tmpdir(), ${JSON.stringify(marker)});
if (!existsSync(marker)) {
  writeFileSync(marker, "");
  throw new Error("only the first load fails");
}
`,
    });
    writeFileSync(join(dir, "slow.ts"), `import "./first-load.ts";\n${readFileSync(join(dir, "slow.ts"), "utf8")}`);
    const run = await berth(["deploy", dir], connected());
    assert.equal(run.code, 1, run.stderr);
    assert.equal(occurrences(run.stderr, "only the first load fails"), 1, run.stderr);
    assert.match(run.stderr, /ended DEPLOY_FAILED: .*failed to load graph "slow" from slow\.ts .*\(at first-load\.ts:8:9\)/);
    for (const internal of [REPO_ROOT, cp.dataDir, "/app/"]) assert.ok(!run.stderr.includes(internal), internal);
  });
});
