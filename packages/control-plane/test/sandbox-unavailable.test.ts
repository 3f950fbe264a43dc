// Runs in the SQLite pass only: its subject is the sandbox when bubblewrap is missing,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { after, describe, test } from "node:test";
import { backendEnv } from "@berth/test-support";
import { api, type ControlPlane, newDataDir, REPO_ROOT, startControlPlane } from "@berth/test-support";
import { deployTarball, finalRevision, packFixture } from "@berth/test-support";

// Where no sandbox can be had (no bwrap, not root...), a listener runs one
// workspace's code only, unless trusted with all of it. The probe honours
// BERTH_TEST_SANDBOX_UNAVAILABLE=1 (a switch for tests), so this runs here too.

const FORCED = { BERTH_TEST_SANDBOX_UNAVAILABLE: "1" };

/** The listener's one line about the sandbox, from a control plane's output. */
function sandboxLine(output: string): string {
  const line = output.split("\n").find((text) => text.includes("NO SANDBOX"));
  assert.ok(line, `no line about the missing sandbox in:\n${output}`);
  return (JSON.parse(line) as { msg: string }).msg;
}

/** Deploys deploy-app in a new workspace; resolves with the final revision. */
async function deployInNewWorkspace(cp: ControlPlane, name: string) {
  const workspace = await cp.createTenant(name);
  const key = await cp.createKey({ tenants: [workspace.id] });
  const client = api(cp.url, key.key, workspace.id);
  const { deployment, revisionId } = await deployTarball(client, name, packFixture("deploy-app"));
  return finalRevision(client, deployment.id, revisionId);
}

describe("a listener without a sandbox", () => {
  const running: ControlPlane[] = [];
  after(() => Promise.all(running.map((cp) => cp.stop())));

  test("says why at start, runs the first workspace's deployments, and fails another workspace's revision saying why", async () => {
    const cp = await startControlPlane({ listener: true, env: FORCED });
    running.push(cp);
    assert.match(
      sandboxLine(cp.output()),
      /^NO SANDBOX \(BERTH_TEST_SANDBOX_UNAVAILABLE is set, a switch for tests\): .*ONE workspace only.*--trust-all-code/,
    );
    const first = await deployTarball(cp.admin, "first", packFixture("deploy-app"));
    const deployed = await finalRevision(cp.admin, first.deployment.id, first.revisionId);
    assert.equal(deployed.status, "DEPLOYED", deployed.status_message ?? undefined);

    const refused = await deployInNewWorkspace(cp, "other");
    assert.equal(refused.status, "BUILD_FAILED");
    assert.match(
      refused.status_message ?? "",
      /^This listener runs code without a sandbox \(BERTH_TEST_SANDBOX_UNAVAILABLE is set/,
    );
    assert.match(refused.status_message ?? "", new RegExp(`one workspace only \\(${cp.defaultTenantId}\\)`));
    assert.match(refused.status_message ?? "", /--trust-all-code \(BERTH_TRUST_ALL_CODE=1\)/);

    // The first workspace keeps deploying.
    const again = await deployTarball(cp.admin, "first-again", packFixture("deploy-app"));
    assert.equal((await finalRevision(cp.admin, again.deployment.id, again.revisionId)).status, "DEPLOYED");
  });

  test("BERTH_TRUST_ALL_CODE=1: every workspace's deployments run, and the start says so", async () => {
    const cp = await startControlPlane({ listener: true, env: { ...FORCED, BERTH_TRUST_ALL_CODE: "1" } });
    running.push(cp);
    assert.match(sandboxLine(cp.output()), /every workspace run as the listener's own user .*\(--trust-all-code\)$/);
    const first = await deployTarball(cp.admin, "first", packFixture("deploy-app"));
    assert.equal((await finalRevision(cp.admin, first.deployment.id, first.revisionId)).status, "DEPLOYED");
    const other = await deployInNewWorkspace(cp, "other");
    assert.equal(other.status, "DEPLOYED", other.status_message ?? undefined);
  });

  for (const command of ["control-plane", "listener"]) {
    test(`berth ${command} --trust-all-code: the start says every workspace's code runs`, async () => {
      const dataDir = newDataDir();
      const args =
        command === "control-plane"
          ? ["control-plane", "--port", "0", "--data-dir", dataDir]
          : [
              "listener",
              "--control-plane",
              "http://127.0.0.1:9",
              "--api-key",
              "unused",
              "--listener-id",
              randomUUID(),
              "--data-dir",
              dataDir,
              // Given, the compute needs no answer from the (unreachable) control plane at start.
              "--compute",
              "local",
            ];
      const child = spawn(process.execPath, [`${REPO_ROOT}/packages/cli/bin/berth.mjs`, ...args, "--trust-all-code"], {
        env: { ...process.env, ...(await backendEnv(dataDir)), ...FORCED, BERTH_ROUTER_PORT: "0", LOG_LEVEL: "info" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const exited = new Promise((resolve) => child.once("exit", resolve));
      let output = "";
      try {
        await new Promise<void>((resolve, reject) => {
          child.stdout.on("data", (chunk: Buffer) => {
            output += chunk.toString();
            if (/"msg":"NO SANDBOX[^\n]*\n/.test(output)) resolve();
          });
          child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
          child.once("exit", (code) => reject(new Error(`berth ${command} exited (${code}):\n${output}`)));
        });
        assert.match(sandboxLine(output), /\(--trust-all-code\)$/);
      } finally {
        child.kill("SIGTERM");
        await exited;
      }
    });
  }
});
