import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type ControlPlane,
  createDeployment,
  deployTarball,
  finalRevision,
  internalSourceBody,
  packFixture,
  type Revision,
  runBerth,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";

/** A build on a loaded machine. */
const LINE_MS = 120_000;

describe("the control plane's terminal tells each revision's steps as they happen", () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane({ listener: true });
  });
  after(() => cp?.stop());

  const lineMatching = (pattern: RegExp) => cp.outputLine(pattern, LINE_MS);

  test("a deployment: its revisions created, building, and deployed at its URL", async () => {
    const name = uniqueName("lines");
    const { deployment, revisionId } = await deployTarball(cp.admin, name, packFixture("deploy-app"));
    assert.equal((await finalRevision(cp.admin, deployment.id, revisionId)).status, "DEPLOYED");
    await lineMatching(
      new RegExp(
        `\\d\\d:\\d\\d:\\d\\d ${name}: revision 1 created \\(new deployment\\), id [0-9a-f-]{36}; waiting for its source$`,
      ),
    );
    await lineMatching(new RegExp(`${name}: revision 2 created \\(update\\), id ${revisionId}$`));
    await lineMatching(new RegExp(`${name}: revision 2 building$`));
    const [, url] = await lineMatching(new RegExp(`${name}: revision 2 deployed at (\\S+)$`));
    assert.equal(url, `${cp.routerUrl}/d/${deployment.id}`);
  });

  test("a project whose graph does not load: failed, with the status and the reason", async () => {
    const name = uniqueName("broken");
    const broken = packFixture("deploy-app", { "agent.ts": 'throw new Error("the model key is missing");\n' });
    const { deployment, revisionId } = await deployTarball(cp.admin, name, broken);
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "BUILD_FAILED");
    const [, reason] = await lineMatching(new RegExp(`${name}: revision 2 failed \\(BUILD_FAILED\\): (.+)$`));
    assert.ok(revision.status_message?.startsWith(reason.replace(/…$/, "")), `${reason} vs ${revision.status_message}`);
  });

  test("an interrupted revision", async () => {
    const name = uniqueName("stopped");
    const created = await createDeployment(cp.admin, internalSourceBody(name));
    const interrupted = await cp.admin.post<Revision>(
      `/v2/deployments/${created.id}/revisions/${created.latest_revision_id}/interrupt`,
    );
    assert.equal(interrupted.status, 200);
    await lineMatching(new RegExp(`${name}: revision 1 interrupted: Interrupted on request$`));
  });
});

/** What a hostile build prints: a title set by OSC, a screen cleared by CSI (also C1's), a line rewritten by CR. */
const HOSTILE_OUTPUT = String.raw`process.stdout.write("noisy \x1b]0;pwned\x07\x1b[2J\x9b3Jcleared\rrewritten\x08\n"); process.exit(3);`;
/** The characters that drive a terminal, of those the build prints: ESC, BEL, CR, backspace; and C1's CSI. */
const TERMINAL_CONTROLS = ["\u001b", "\u0007", "\r", "\b", "\u009b"];
const assertPrintable = (text: string, what: string) => {
  const found = TERMINAL_CONTROLS.filter((control) => text.includes(control));
  assert.deepEqual(found, [], `${what} holds ${JSON.stringify(found)}: ${JSON.stringify(text)}`);
};

describe("a deployment's escape sequences never reach an operator's terminal", () => {
  let cp: ControlPlane;
  let name: string;
  const berth = (args: string[]) =>
    runBerth(args, {
      env: { ...process.env, BERTH_URL: cp.url, BERTH_API_KEY: cp.adminKey, BERTH_TENANT_ID: cp.defaultTenantId },
    });

  before(async () => {
    cp = await startControlPlane({ listener: true });
    name = uniqueName("noisy");
    const { deployment, revisionId } = await deployTarball(
      cp.admin,
      name,
      packFixture("deploy-app", { "noisy.mjs": `${HOSTILE_OUTPUT}\n` }),
      { sourceConfig: { build_command: "node noisy.mjs" } },
    );
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "BUILD_FAILED");
    // The API answers what the build printed as it was: the terminals are what must not act on it.
    assert.ok(revision.status_message?.includes("\u001b]0;pwned\u0007"), revision.status_message ?? undefined);
  });
  after(() => cp?.stop());

  test("the control plane's own terminal: the failed revision's line, with the sequences removed", async () => {
    const [, reason] = await cp.outputLine(new RegExp(`${name}: revision 2 failed \\(BUILD_FAILED\\): (.*)$`), LINE_MS);
    assert.match(reason, /: noisy cleared\\x0drewritten\\x08$/);
    assertPrintable(cp.output(), "the control plane's output");
  });

  test("berth logs --build and berth revisions list and get print the text without them", async () => {
    const logs = await berth(["logs", name, "--build"]);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /\] noisy cleared\\x0drewritten\\x08$/m);
    const list = await berth(["revisions", "list", name]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /BUILD_FAILED .*noisy cleared\\x0drewritten\\x08/);
    const get = await berth(["revisions", "get", name]);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /reason .*noisy cleared/);
    for (const run of [logs, list, get]) {
      assertPrintable(run.stdout, "stdout");
      assertPrintable(run.stderr, "stderr");
    }
  });

  test("--json keeps the text whole, as JSON escapes", async () => {
    const list = await berth(["revisions", "list", name, "--json"]);
    assert.equal(list.code, 0, list.stderr);
    assertPrintable(list.stdout, "the JSON");
    const page = JSON.parse(list.stdout) as { resources: Revision[] };
    assert.ok(page.resources[0]!.status_message?.includes("\u001b]0;pwned\u0007"), list.stdout);
  });
});
