import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  CONTROL_PLANE_FIXTURES,
  type ControlPlane,
  createDeployment,
  type Deployment,
  deployTarball,
  finalRevision,
  logsOf,
  makeTarball,
  packFixture,
  projectFiles,
  revisionLeaves,
  startControlPlane,
} from "@berth/test-support";

describe("revisions that do not deploy", () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane({ listener: true });
  });
  after(() => cp?.stop());

  test("a project whose graph does not load: BUILD_FAILED with the reason, and the build log", async () => {
    const broken = packFixture("deploy-app", { "agent.ts": 'throw new Error("the model key is missing");\n' });
    const { deployment, revisionId } = await deployTarball(cp.admin, "broken", broken);
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "BUILD_FAILED");
    assert.match(revision.status_message ?? "", /agent/);
    const log = await logsOf(cp.admin, deployment.id, revisionId, "build");
    assert.ok(
      log.some((line) => line.message.includes("the model key is missing")),
      log.map((line) => line.message).join("\n"),
    );
    const current = await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`);
    assert.equal(current.body.active_revision_id, null);
    assert.equal(current.body.status, "UNUSED");
  });

  test("a missing graph config: BUILD_FAILED naming the path", async () => {
    const { deployment, revisionId } = await deployTarball(cp.admin, "no-config", makeTarball({ "readme.md": "nothing here" }));
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "BUILD_FAILED");
    assert.match(revision.status_message ?? "", /langgraph\.json/);
  });

  test("a tarball with a ../ entry is refused, and nothing lands outside the build", async () => {
    const evil = makeTarball({ ...projectFiles(`${CONTROL_PLANE_FIXTURES}/deploy-app`), "../escaped.txt": "gotcha" });
    const { deployment, revisionId } = await deployTarball(cp.admin, "evil", evil);
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "BUILD_FAILED");
    assert.match(revision.status_message ?? "", /\.\.\/escaped\.txt/);
  });

  test("a failing install_command: BUILD_FAILED with the command and its exit code", async () => {
    const { deployment, revisionId } = await deployTarball(cp.admin, "bad-install", packFixture("deploy-app"), {
      sourceConfig: { install_command: "node -e process.exit(3)" },
    });
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "BUILD_FAILED");
    assert.match(revision.status_message ?? "", /install/);
    assert.match(revision.status_message ?? "", /3/);
  });

  test("an image source on local compute: DEPLOY_FAILED saying why", async () => {
    const created = await createDeployment(cp.admin, {
      name: "image",
      source: "external_image",
      source_config: {},
      source_revision_config: { image_uri: "registry.local/agent:1" },
      secrets: [],
    });
    const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
    assert.equal(revision.status, "DEPLOY_FAILED");
    assert.match(revision.status_message ?? "", /internal_source/);
  });

  test("interrupt: a revision building ends INTERRUPTED; a final one answers 409", async () => {
    const { deployment, revisionId } = await deployTarball(cp.admin, "interrupted", packFixture("deploy-app"), {
      // The thing interrupted: a build that would take a minute.
      sourceConfig: { build_command: "sleep 60" },
    });
    await revisionLeaves(cp.admin, deployment.id, revisionId, "QUEUED");
    const building = await revisionLeaves(cp.admin, deployment.id, revisionId, "AWAITING_BUILD");
    assert.equal(building.status, "BUILDING");
    const interrupted = await cp.admin.post<{ status: string; status_message: string }>(
      `/v2/deployments/${deployment.id}/revisions/${revisionId}/interrupt`,
    );
    assert.equal(interrupted.status, 200);
    assert.equal(interrupted.body.status, "INTERRUPTED");
    const again = await cp.admin.post<{ detail: string }>(`/v2/deployments/${deployment.id}/revisions/${revisionId}/interrupt`);
    assert.equal(again.status, 409);
    assert.match(again.body.detail, /INTERRUPTED/);
  });
});
