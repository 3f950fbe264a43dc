// Berth as a user gets it: `npm run pack`'s tarballs installed with npm into an empty folder outside the repository
// (no workspace, no checkout on any path), then `berth dev`, `berth control-plane` and `berth deploy` run from there on
// a LangGraph.js project of its own, and the official SDK streams runs from them. Slow: one real `npm install` of
// Berth's dependencies from the registry, shared by every case.
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { cpSync, existsSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type BerthProcess,
  type ControlPlane,
  newDataDir,
  REPO_ROOT,
  runBerth,
  runCommand,
  startBerth,
  startControlPlane,
  TEST_BACKEND,
} from "@berth/test-support";

/** The install and the project: npm from the registry, on a loaded machine, takes minutes. */
const SETUP_TIMEOUT_MS = 40 * 60_000;

interface Lockfile {
  packages: Record<string, { version?: string; resolved?: string }>;
}

interface PackageManifest {
  version: string;
  exports?: Record<string, string | Record<string, string>>;
}

/**
 * The environment of npm and of the installed `berth`: a home of their own, none of the npm_* variables an
 * `npm test` of the workspace sets (npm_config_local_prefix names the checkout), and no Node options. The
 * machine's npm settings (CA bundle, Node headers for native addons) and its download cache are kept: they
 * say nothing about the workspace.
 */
function outsideEnv(home: string): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const name of Object.keys(process.env)) {
    if (/^npm_/i.test(name) || ["INIT_CWD", "NODE_OPTIONS", "NODE_PATH"].includes(name)) env[name] = undefined;
  }
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    npm_config_userconfig: process.env.npm_config_userconfig ?? join(homedir(), ".npmrc"),
    npm_config_cache: process.env.npm_config_cache ?? join(homedir(), ".npm"),
    npm_config_update_notifier: "false",
    BERTH_URL: undefined,
    BERTH_API_KEY: undefined,
    BERTH_TENANT_ID: undefined,
  };
}

/** This process's environment with `changes` over it (spawn leaves out the variables they set to undefined). */
function childEnv(changes: Record<string, string | undefined>): NodeJS.ProcessEnv {
  return { ...process.env, ...changes };
}

/** `npm <args>` in `cwd`, failing with all it printed. */
async function npm(args: string[], cwd: string, env: Record<string, string | undefined>): Promise<string> {
  const run = await runCommand("npm", args, { cwd, env: childEnv(env) });
  if (run.code !== 0) throw new Error(`npm ${args.join(" ")} in ${cwd} exited ${run.code}:\n${run.stdout}\n${run.stderr}`);
  return run.stdout;
}

/**
 * better-sqlite3's prebuilt binary where prebuild-install's documented `local_prebuilds` setting finds it, made from the
 * one this checkout's install built (same Node ABI, platform and, while the registry's newest 12.x is the lockfile's,
 * version; otherwise npm compiles one, slowly). Its usual source, GitHub, is not reachable from every machine, and
 * compiling SQLite takes minutes of the file's time limit; nothing of Berth's comes from here.
 */
async function sqlitePrebuild(dir: string): Promise<Record<string, string>> {
  const installed = join(REPO_ROOT, "node_modules", "better-sqlite3");
  const { version: sqliteVersion } = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as PackageManifest;
  const name = `better-sqlite3-v${sqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const made = await runCommand("tar", ["-czf", join(dir, name), "-C", installed, "build/Release/better_sqlite3.node"]);
  assert.equal(made.code, 0, made.stderr);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

/** The last message of a graph state's `messages`, as text. */
function lastMessage(values: unknown): string {
  const messages = (values as { messages: { content: unknown }[] }).messages;
  return String(messages.at(-1)?.content);
}

/** Streams one run of the echo graph with the SDK; resolves with the state's last message. */
async function streamEcho(client: Client, text: string): Promise<string> {
  const thread = await client.threads.create();
  const events: string[] = [];
  for await (const part of client.runs.stream(thread.thread_id, "agent", {
    input: { messages: [{ type: "human", content: text }] },
    streamMode: "values",
  })) {
    events.push(part.event);
  }
  assert.ok(events.includes("metadata") && events.includes("values"), events.join(","));
  return lastMessage((await client.threads.getState(thread.thread_id)).values);
}

// The install is the same whatever the backend: it runs once, in the SQLite pass of the suite.
const ONCE = TEST_BACKEND === "postgres" ? "the install from the tarballs is tested in the SQLite pass" : false;

describe("berth installed from its tarballs outside the repository", { skip: ONCE }, () => {
  let install: string;
  let project: string;
  let env: Record<string, string | undefined>;
  /** The `berth` command of the package `berth`, as npm installed it. */
  let bin: string;
  let version: string;
  const servers: (BerthProcess | ControlPlane)[] = [];
  /** Folders this file made. */
  const scratch: string[] = [];
  const scratchDir = (prefix: string) => {
    const dir = newDataDir(prefix);
    scratch.push(dir);
    return dir;
  };

  before(
    async () => {
      const home = scratchDir("berth-outside-home-");
      env = outsideEnv(home);
      // Without the registry there is no install to test: say so, never skip.
      const ping = await runCommand("npm", ["view", "@langchain/langgraph", "version"], {
        cwd: home,
        env: childEnv(env),
      });
      assert.equal(
        ping.code,
        0,
        `the npm registry is unreachable, and this test installs Berth's dependencies from it:\n${ping.stderr}`,
      );

      // CI packs once for this test and the image's (BERTH_PACKS_DIR); run alone, the test packs itself.
      let packs = process.env.BERTH_PACKS_DIR;
      if (!packs) {
        packs = scratchDir("berth-packs-");
        const packed = await runCommand(process.execPath, [join(REPO_ROOT, "scripts", "pack.mjs"), "--out", packs], {
          cwd: REPO_ROOT,
        });
        assert.equal(packed.code, 0, `npm run pack failed:\n${packed.stderr}`);
      }
      const tarballs = readdirSync(packs)
        .filter((name) => name.endsWith(".tgz"))
        .map((name) => join(packs, name));

      install = scratchDir("berth-outside-install-");
      writeFileSync(join(install, "package.json"), `${JSON.stringify({ name: "berth-install", private: true })}\n`);
      // The user's project: the echo-chat example with its own package.json and dependencies, in a folder of its own.
      project = join(scratchDir("berth-outside-project-"), "echo-chat");
      cpSync(join(REPO_ROOT, "examples", "echo-chat"), project, {
        recursive: true,
        filter: (path) => !/\/(node_modules|\.berth)(\/|$)/.test(path),
      });
      const prebuilds = await sqlitePrebuild(scratchDir("berth-sqlite-prebuild-"));
      await Promise.all([
        npm(["install", "--no-audit", "--no-fund", ...tarballs], install, { ...env, ...prebuilds }),
        npm(["install", "--no-audit", "--no-fund"], project, env),
      ]);
      bin = join(install, "node_modules", "berth", "bin", "berth.mjs");
      version = (JSON.parse(readFileSync(join(REPO_ROOT, "packages", "cli", "package.json"), "utf8")) as PackageManifest).version;
    },
    { timeout: SETUP_TIMEOUT_MS },
  );
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    // The install and the project's dependencies are hundreds of MB: not left behind in the temp dir.
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });

  test("every Berth package comes from its tarball, at one version, compiled with declarations", () => {
    const lock = JSON.parse(readFileSync(join(install, "package-lock.json"), "utf8")) as Lockfile;
    const ours = Object.entries(lock.packages).filter(([path]) => /(^|\/)node_modules\/(@berth\/[^/]+|berth)$/.test(path));
    const names = ours.map(([path]) => path.replace(/^node_modules\//, "")).sort();
    assert.deepEqual(names, [
      "@berth/agent-server",
      "@berth/cli",
      "@berth/control-plane",
      "@berth/dashboard",
      "@berth/graph-auth",
      "@berth/listener",
      "@berth/listener-protocol",
      "@berth/service-kit",
      "berth",
    ]);
    for (const [path, entry] of ours) {
      assert.match(entry.resolved ?? "", /^file:.*\.tgz$/, `${path} is installed from its tarball`);
      assert.equal(entry.version, version, path);
      const dir = join(install, path);
      assert.equal(realpathSync(dir), dir, `${path} is a copy, not a link into the checkout`);
      assert.ok(!existsSync(join(dir, "src")), `${path} ships no sources`);
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageManifest;
      for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
        if (typeof target === "string") continue;
        assert.deepEqual(Object.keys(target), ["types", "default"], `${path} exports ${subpath}`);
        for (const file of Object.values(target)) assert.ok(existsSync(join(dir, file)), `${path}: ${file}`);
      }
    }
    assert.ok(existsSync(join(install, "node_modules", ".bin", "berth")), "npm links the berth command");
  });

  test("berth --version prints the packed version", async () => {
    const run = await runBerth(["--version"], { bin, cwd: install, env: childEnv(env) });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.trim(), version);
  });

  test("berth dev serves the user's project, and the SDK streams a run", async () => {
    const dev = await startBerth({ bin, cwd: project, project, env, reload: true });
    servers.push(dev);
    assert.equal(await streamEcho(dev.client, "hello from outside"), "You said: hello from outside");
  });

  test("berth control-plane and berth deploy: the deployment streams a run at its URL", async () => {
    const cp = await startControlPlane({ bin, cwd: install, env, listener: true });
    servers.push(cp);
    const deploy = await runBerth(["deploy", "."], {
      bin,
      cwd: project,
      env: childEnv({ ...env, BERTH_URL: cp.url, BERTH_API_KEY: cp.adminKey }),
      input: "",
    });
    assert.equal(deploy.code, 0, deploy.stderr);
    const url = deploy.stdout.trim();
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/d\/[0-9a-f-]{36}$/);
    assert.match(deploy.stderr, /DEPLOYED/);
    const client = new Client({ apiUrl: url, apiKey: cp.adminKey });
    assert.equal(await streamEcho(client, "hello, deployment"), "You said: hello, deployment");
    // The dashboard the control plane serves is the packed one.
    const page = await fetch(`${cp.url}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>Berth<\/title>/);
  });
});
