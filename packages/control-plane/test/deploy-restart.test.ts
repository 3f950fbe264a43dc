import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { type Deployment, startControlPlane } from "@berth/test-support";
import { listenerArgsFor, startListenerProcess } from "./helpers/listener-process.js";
import { deployTarball, finalRevision, packFixture, revisionLeaves } from "@berth/test-support";

test("a control-plane restart during a build: the revision starts over and deploys", async () => {
  let cp = await startControlPlane({ listener: true });
  const { dataDir, adminKey, defaultTenantId } = cp;
  try {
    const { deployment, revisionId } = await deployTarball(cp.admin, "restarted", packFixture("deploy-app"), {
      sourceConfig: { build_command: "sleep 3" },
    });
    await revisionLeaves(cp.admin, deployment.id, revisionId, "QUEUED");
    assert.equal((await revisionLeaves(cp.admin, deployment.id, revisionId, "AWAITING_BUILD")).status, "BUILDING");
    await cp.kill();
    cp = await startControlPlane({ listener: true, dataDir, adminKey, defaultTenantId });
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const events = await cp.admin.get<{ resources: { status: string; message: string }[] }>(
      `/v2/deployments/${deployment.id}/revisions/${revisionId}/events`,
    );
    assert.ok(
      events.body.resources.some((event) => /restarted while the revision was BUILDING/.test(event.message)) ||
        (
          await cp.admin.post<{ logs: { message: string }[] }>(
            `/v1/projects/${deployment.id}/revisions/${revisionId}/build_logs`,
            {
              limit: 1000,
            },
          )
        ).body.logs.some((line) => /restarted while the revision was BUILDING/.test(line.message)),
      "the restart is recorded",
    );
  } finally {
    await cp.stop();
  }
});

/** `berth listener` as its own process; resolves with its router URL once it listens. */

test("a listener on its own: it pulls work over HTTP, and its deployments keep serving while the control plane is down", async () => {
  const cp = await startControlPlane();
  let listener: Awaited<ReturnType<typeof startListenerProcess>> | undefined;
  try {
    const registered = await cp.admin.post<{ id: string }>("/v2/listeners", {
      compute_type: "local",
      compute_id: "machine-2",
      default: true,
    });
    assert.equal(registered.status, 201);
    listener = await startListenerProcess([
      ...listenerArgsFor(cp, registered.body.id, mkdtempSync(join(tmpdir(), "berth-listener-"))),
      "--router-port",
      "0",
    ]);
    const { deployment, revisionId } = await deployTarball(cp.admin, "remote", packFixture("deploy-app"));
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "DEPLOYED", `${revision.status_message}\n${listener.output()}`);
    const url = (await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body.source_config.custom_url!;
    assert.ok(url.startsWith(listener.routerUrl), `${url} is served by the listener's router ${listener.routerUrl}`);
    const call = () => fetch(`${url}/threads`, { method: "POST", headers: { "x-api-key": cp.adminKey } });
    assert.equal((await call()).status, 200);

    await cp.kill();
    assert.equal((await call()).status, 200, "the deployment serves while the control plane is down");
    assert.equal((await fetch(`${url}/ok`)).status, 200);
  } finally {
    if (listener && listener.child.exitCode === null) {
      listener.child.kill("SIGTERM");
      await once(listener.child, "exit");
    }
    await cp.stop();
  }
});
