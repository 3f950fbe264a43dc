// Runs in the SQLite pass only: its subject is the official CLI,
// where the control plane's database plays no part.
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test, type TestContext } from "node:test";
import {
  type CommandRun,
  type ControlPlane,
  type Deployment,
  type LogLine,
  type Page,
  revisionsOf,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";
import { CLI_APP, cliEnv, ensureLangGraphCli, langgraphjs, LANGGRAPH_CLI_VERSION, shown } from "./helpers/langgraph-cli.js";

/** The official CLI (`@langchain/langgraph-cli`), installed from the npm registry, against a Berth control plane. */

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

interface JsonEvent {
  event: string;
  [field: string]: unknown;
}

/** Every line of a `--json` run is one JSON event. */
function jsonEvents(stdout: string): JsonEvent[] {
  return stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      try {
        return JSON.parse(line) as JsonEvent;
      } catch {
        throw new Error(`not a JSON line: ${line}\n--- whole stdout\n${stdout}`);
      }
    });
}

/** The rows of one of the CLI's tables (a header, a dashed line, then rows of cells two spaces apart). */
function tableRows(stdout: string, header: string): string[][] {
  const lines = stdout.split("\n");
  const at = lines.findIndex((line) => line.startsWith(header));
  assert.notEqual(at, -1, `no table headed "${header}" in:\n${stdout}`);
  return lines
    .slice(at + 2)
    .filter((line) => line.trim() !== "")
    .map((line) => line.trim().split(/\s{2,}/));
}

/** The text of the last message of a run's output. */
function lastMessage(values: unknown): string {
  const messages = (values as { messages: { content: string }[] }).messages;
  return messages[messages.length - 1]!.content;
}

describe(`the official LangGraph CLI ${LANGGRAPH_CLI_VERSION} deploys to Berth`, () => {
  let bin: string;
  let cp: ControlPlane;
  let key: string;
  let project: string;
  let name: string;
  let deployment: Deployment;
  let url: string;

  /** `langgraphjs <args>` in the project, with the workspace key in LANGSMITH_API_KEY (as a user's shell or .env has it). */
  const cli = (args: string[], onStdout?: (soFar: string) => void): Promise<CommandRun> =>
    langgraphjs(bin, args, { cwd: project, env: cliEnv({ LANGSMITH_API_KEY: key }), onStdout });

  /** `langgraphjs deploy --remote ...`; resolves with the run and the seconds from its start until `seen` first matched its output. */
  async function deploy(extra: string[], seen: RegExp): Promise<{ result: CommandRun; seconds: number | undefined }> {
    const started = performance.now();
    let seconds: number | undefined;
    const result = await cli(
      ["deploy", "--remote", "--host-url", cp.url, "--api-key", key, "--name", name, "--no-input", ...extra],
      (soFar) => {
        if (seconds === undefined && seen.test(soFar)) seconds = (performance.now() - started) / 1000;
      },
    );
    return { result, seconds };
  }

  const ask = async (question: string) => {
    const client = new Client({ apiUrl: url, apiKey: key });
    return lastMessage(await client.runs.wait(null, "agent", { input: { messages: [{ type: "human", content: question }] } }));
  };

  before(
    async () => {
      bin = await ensureLangGraphCli();
      cp = await startControlPlane({ listener: true });
      key = (await cp.createKey({ tenants: [cp.defaultTenantId], name: "langgraph-cli" })).key;
      project = mkdtempSync(join(tmpdir(), "berth-langgraph-cli-"));
      cpSync(CLI_APP, project, { recursive: true });
      // The CLI sends the project's .env entries as the deployment's secrets.
      writeFileSync(join(project, ".env"), "GREETING=from-cli\n");
      name = uniqueName("cli");
    },
    { timeout: 600_000 },
  );
  after(() => cp?.stop());

  test("deploy --remote creates the deployment, builds it, and prints its URL, which the official SDK answers", {
    timeout: 600_000,
  }, async (t: TestContext) => {
    const { result, seconds } = await deploy([], /^\s*URL: \S+/m);
    assert.equal(result.code, 0, shown(result));
    assert.match(result.stdout, /Creating deployment/, shown(result));
    assert.match(result.stdout, /Deployment successful!/, shown(result));
    const printed = /^\s*URL: (\S+)$/m.exec(result.stdout)?.[1];
    assert.match(printed ?? "", new RegExp(`^http://127\\.0\\.0\\.1:\\d+/d/${UUID}$`), shown(result));
    t.diagnostic(`langgraphjs deploy --remote (first deploy): ${seconds!.toFixed(1)} s from start to the printed URL`);

    const found = await cp.admin.get<Page<Deployment>>(`/v2/deployments?name_contains=${name}`);
    assert.equal(found.body.resources.length, 1);
    deployment = found.body.resources[0]!;
    url = printed!;
    assert.equal(deployment.source_config.custom_url, url);
    assert.equal(deployment.source, "internal_source");
    assert.equal(deployment.source_config.deployment_type, "dev");
    assert.equal(deployment.source_revision_config.graph_config_path, "langgraph.json");
    assert.deepEqual(deployment.secrets, [{ name: "GREETING", value: "********" }]);
    const revisions = await revisionsOf(cp.admin, deployment.id);
    assert.deepEqual(
      revisions.map((revision) => revision.status),
      ["DEPLOYED", "SKIPPED"],
      "the created revision waited for the source, then the upload's revision deployed",
    );

    assert.equal(await ask("hi"), "v1 from-cli: hi");
  });

  test("a second deploy of changed code (--json) makes a new revision that serves the change", {
    timeout: 600_000,
  }, async (t: TestContext) => {
    const agent = join(project, "agent.ts");
    const source = readFileSync(agent, "utf8");
    assert.ok(source.includes('export const VERSION = "v1";'));
    writeFileSync(agent, source.replace('export const VERSION = "v1";', 'export const VERSION = "v2";'));

    const { result, seconds } = await deploy(["--json"], /"event":"result"/);
    assert.equal(result.code, 0, shown(result));
    const events = jsonEvents(result.stdout);
    assert.ok(
      events.some((event) => event.event === "info" && event.message === `Found existing deployment (ID: ${deployment.id})`),
      result.stdout,
    );
    assert.ok(!events.some((event) => event.event === "error"), result.stdout);
    const statuses = events.filter((event) => event.event === "status_change").map((event) => event.status);
    assert.ok(statuses.length > 0, result.stdout);
    const final = events.at(-1)!;
    assert.deepEqual(
      { event: final.event, status: final.status, deployment_id: final.deployment_id, url: final.url },
      { event: "result", status: "succeeded", deployment_id: deployment.id, url },
      result.stdout,
    );
    t.diagnostic(
      `langgraphjs deploy --remote --json (re-deploy of changed code): ${seconds!.toFixed(1)} s from start to the result with the URL`,
    );

    const revisions = await revisionsOf(cp.admin, deployment.id);
    assert.deepEqual(
      revisions.map((revision) => revision.status),
      ["DEPLOYED", "DEPLOYED", "SKIPPED"],
    );
    assert.match(revisions[1]!.status_message ?? "", new RegExp(`^Replaced by revision 3 \\(${revisions[0]!.id}\\)`));
    assert.equal(await ask("again"), "v2 from-cli: again");
  });

  test("deploy list prints the deployment with its URL", async () => {
    const result = await cli(["deploy", "list", "--host-url", cp.url]);
    assert.equal(result.code, 0, shown(result));
    assert.deepEqual(tableRows(result.stdout, "Deployment ID"), [[deployment.id, name, url]]);
  });

  test("deploy revisions list: the serving revision DEPLOYED, the replaced one REPLACED (the CLI's own label), the first SKIPPED", async () => {
    const result = await cli(["deploy", "revisions", "list", deployment.id, "--host-url", cp.url]);
    assert.equal(result.code, 0, shown(result));
    const revisions = await revisionsOf(cp.admin, deployment.id);
    assert.deepEqual(
      tableRows(result.stdout, "Revision ID"),
      revisions.map((revision, index) => [revision.id, ["DEPLOYED", "REPLACED", "SKIPPED"][index]!, revision.created_at]),
    );
  });

  test("deploy logs prints the server logs and the latest revision's build logs that Berth holds", async () => {
    const logs = async (path: string, body: Record<string, unknown>) => {
      const response = await cp.admin.post<{ logs: LogLine[] }>(path, { order: "desc", limit: 1000, ...body });
      assert.equal(response.status, 200);
      return response.body.logs;
    };
    const line = (entry: LogLine) => `[${entry.timestamp}] [${entry.level}] ${entry.message}`;
    const latest = (await revisionsOf(cp.admin, deployment.id))[0]!;

    const server = await logs(`/v1/projects/${deployment.id}/deploy_logs`, {});
    assert.ok(server.some((entry) => entry.message.includes("agent server listening")));
    const serverRun = await cli(["deploy", "logs", "--deployment-id", deployment.id, "--limit", "1000", "--host-url", cp.url]);
    assert.equal(serverRun.code, 0, shown(serverRun));
    for (const entry of server) assert.ok(serverRun.stdout.includes(line(entry)), `missing ${line(entry)}\n${shown(serverRun)}`);

    const build = await logs(`/v1/projects/${deployment.id}/revisions/${latest.id}/build_logs`, {});
    assert.ok(build.length > 0);
    const buildRun = await cli(["deploy", "logs", "--type", "build", "--name", name, "--limit", "1000", "--host-url", cp.url]);
    assert.equal(buildRun.code, 0, shown(buildRun));
    assert.match(buildRun.stdout, new RegExp(`Using latest revision: ${latest.id}`));
    for (const entry of build) assert.ok(buildRun.stdout.includes(line(entry)), `missing ${line(entry)}\n${shown(buildRun)}`);

    // The CLI sends levels upper-case (INFO, WARNING, ERROR); Berth's are lower-case.
    const infoRun = await cli(["deploy", "logs", "--deployment-id", deployment.id, "--level", "info", "--host-url", cp.url]);
    assert.equal(infoRun.code, 0, shown(infoRun));
    const printed = infoRun.stdout.split("\n").filter((text) => text.startsWith("["));
    assert.ok(printed.length > 0, shown(infoRun));
    assert.ok(
      printed.every((text) => / \[info\] /.test(text)),
      shown(infoRun),
    );
  });

  test("deploy delete removes the deployment", async () => {
    const result = await cli(["deploy", "delete", deployment.id, "--force", "--host-url", cp.url]);
    assert.equal(result.code, 0, shown(result));
    assert.match(result.stdout, new RegExp(`Deleted deployment ${deployment.id}\\.`));
    assert.equal((await cp.admin.get(`/v2/deployments/${deployment.id}`)).status, 404);
    const listed = await cli(["deploy", "list", "--host-url", cp.url]);
    assert.equal(listed.code, 0, shown(listed));
    assert.match(listed.stdout, /No deployments found\./);
  });
});
