import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type ControlPlane,
  createDeployment,
  internalSourceBody,
  type Revision,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";
import { deployTarball, finalRevision, packFixture } from "./helpers/deploy.js";

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
