import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  type ControlPlane,
  createDeployment,
  type Deployment,
  type ErrorBody,
  externalImageBody,
  IMAGE,
  internalSourceBody,
  type Page,
  type Revision,
  revisionsOf,
  startControlPlane,
  uniqueName,
  uploadSource,
} from "@berth/test-support";

type Change = { kind: "image"; image_uri: string } | { kind: "scale"; min_scale: number };

describe("concurrent writes", () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane();
  });
  after(() => cp.stop());

  test("10 concurrent PATCHes: 10 revisions on top of each other, none lost", async () => {
    const deployment = await createDeployment(cp.admin, externalImageBody(uniqueName("race")));
    const changes: Change[] = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0 ? { kind: "image", image_uri: `registry.local/agent:race-${i}` } : { kind: "scale", min_scale: i },
    );
    const responses = await Promise.all(
      changes.map((change) =>
        cp.admin.patch<Deployment>(
          `/v2/deployments/${deployment.id}`,
          change.kind === "image"
            ? { source_revision_config: { image_uri: change.image_uri } }
            : { resource_spec: { min_scale: change.min_scale, max_scale: 20 } },
        ),
      ),
    );
    for (const [i, response] of responses.entries()) {
      assert.equal(response.status, 200, `PATCH ${i}: ${JSON.stringify(response.body)}`);
      const change = changes[i];
      // Each answer shows the deployment with its own change applied.
      if (change.kind === "image") assert.equal(response.body.source_revision_config.image_uri, change.image_uri);
      else assert.equal(response.body.source_config.resource_spec?.min_scale, change.min_scale);
    }
    const latestIds = responses.map((r) => r.body.latest_revision_id);
    assert.equal(new Set(latestIds).size, 10, "each PATCH made its own revision");
    assert.ok(!latestIds.includes(deployment.latest_revision_id));

    const revisions = await revisionsOf(cp.admin, deployment.id);
    assert.equal(revisions.length, 11);
    assert.equal(revisions[10].id, deployment.latest_revision_id, "revision 1 is the oldest");
    assert.deepEqual(new Set(revisions.slice(0, 10).map((r) => r.id)), new Set(latestIds));
    assert.deepEqual(
      revisions.map((r) => r.status),
      ["QUEUED", ...Array<string>(10).fill("SKIPPED")],
      "only the newest revision is still queued",
    );

    // Walk the revisions oldest first: an image PATCH sets its image, a resource_spec PATCH carries the one before it.
    const changeOf = new Map(latestIds.map((id, i) => [id, changes[i]]));
    let image = IMAGE;
    let minScale: number | undefined;
    for (const revision of [...revisions].reverse().slice(1)) {
      const change = changeOf.get(revision.id)!;
      if (change.kind === "image") image = change.image_uri;
      else minScale = change.min_scale;
      assert.equal(revision.source_revision_config.image_uri, image, `revision ${revision.id} carries the image before it`);
    }
    const final = await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`);
    assert.equal(final.body.latest_revision_id, revisions[0].id);
    assert.equal(final.body.source_revision_config.image_uri, revisions[0].source_revision_config.image_uri);
    assert.equal(final.body.source_revision_config.image_uri, image);
    assert.equal(final.body.source_config.resource_spec?.min_scale, minScale, "the last resource_spec PATCH wins");
    assert.equal(final.body.source_config.resource_spec?.max_scale, 20);
  });

  test("an image PATCH and a resource_spec PATCH at once: the deployment has both", async () => {
    const deployment = await createDeployment(cp.admin, externalImageBody(uniqueName("pair")));
    const [imagePatch, specPatch] = await Promise.all([
      cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
        source_revision_config: { image_uri: "registry.local/agent:X" },
      }),
      cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, { resource_spec: { cpu: 1 } }),
    ]);
    assert.equal(imagePatch.status, 200, JSON.stringify(imagePatch.body));
    assert.equal(specPatch.status, 200, JSON.stringify(specPatch.body));
    const final = (await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body;
    assert.equal(final.source_revision_config.image_uri, "registry.local/agent:X");
    assert.equal(final.source_config.resource_spec?.cpu, 1);
    assert.equal((await revisionsOf(cp.admin, deployment.id)).length, 3);
    const newest = (await revisionsOf(cp.admin, deployment.id))[0];
    assert.equal(newest.source_revision_config.image_uri, "registry.local/agent:X");
  });

  test("concurrent PATCHes of the secret list keep every stored value reachable", async () => {
    const deployment = await createDeployment(
      cp.admin,
      externalImageBody(uniqueName("secrets"), { secrets: [{ name: "KEEP", value: "v0" }] }),
    );
    // Each PATCH sends KEEP back masked plus a secret of its own: none may fail for lack of a stored value.
    const responses = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
          secrets: [
            { name: "KEEP", value: "********" },
            { name: `OWN_${i}`, value: `v${i}` },
          ],
        }),
      ),
    );
    for (const response of responses) assert.equal(response.status, 200, JSON.stringify(response.body));
    const final = (await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body;
    assert.equal(final.secrets.length, 2);
    assert.deepEqual(final.secrets[0], { name: "KEEP", value: "********" });
    assert.match(final.secrets[1].name, /^OWN_[0-4]$/);
    assert.equal((await revisionsOf(cp.admin, deployment.id)).length, 6);
  });

  test("5 concurrent creates with one name: one 201, four 409", async () => {
    const name = uniqueName("dup");
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => cp.admin.post<Deployment | ErrorBody>("/v2/deployments", externalImageBody(name))),
    );
    const statuses = responses.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 409, 409, 409, 409], JSON.stringify(responses.map((r) => r.body)));
    for (const response of responses.filter((r) => r.status === 409)) {
      assert.deepEqual(response.body, { detail: `A deployment named "${name}" already exists` });
    }
    const created = responses.find((r) => r.status === 201)!.body as Deployment;
    const listed = await cp.admin.get<Page<Deployment>>(`/v2/deployments?name_contains=${name}`);
    assert.deepEqual(
      listed.body.resources.map((d) => d.id),
      [created.id],
    );
    assert.equal((await revisionsOf(cp.admin, created.id)).length, 1, "the refused creates left no revision behind");
  });

  test("concurrent create and delete of one name: the name is free again afterwards", async () => {
    const name = uniqueName("reuse");
    const first = await createDeployment(cp.admin, externalImageBody(name));
    const [deleted, again] = await Promise.all([
      cp.admin.delete(`/v2/deployments/${first.id}`),
      cp.admin.post<Deployment | ErrorBody>("/v2/deployments", externalImageBody(name)),
    ]);
    assert.equal(deleted.status, 204);
    assert.ok([201, 409].includes(again.status), JSON.stringify(again.body));
    const live = await cp.admin.get<Page<Deployment>>(`/v2/deployments?name_contains=${name}`);
    if (again.status === 201) {
      assert.deepEqual(
        live.body.resources.map((d) => d.id),
        [(again.body as Deployment).id],
      );
    } else {
      assert.deepEqual(live.body.resources, []);
      const retry = await cp.admin.post<Deployment>("/v2/deployments", externalImageBody(name));
      assert.equal(retry.status, 201, "a deleted deployment's name can be reused");
    }
  });
});

describe("two control-plane processes on one data directory", () => {
  let one: ControlPlane;
  let two: ControlPlane;
  before(async () => {
    const env = { BERTH_SECRETS_KEY: randomBytes(32).toString("hex") };
    one = await startControlPlane({ env });
    two = await startControlPlane({ dataDir: one.dataDir, env, adminKey: one.adminKey, defaultTenantId: one.defaultTenantId });
  });
  after(() => Promise.all([one.stop(), two.stop()]));

  test("a secret stored through one is kept (sent back masked) through the other", async () => {
    const deployment = await createDeployment(
      one.admin,
      externalImageBody(uniqueName("shared"), { secrets: [{ name: "TOKEN", value: "t-1" }] }),
    );
    const patched = await two.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      secrets: [{ name: "TOKEN", value: "********" }],
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual((await one.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body, patched.body);
  });

  test("an upload through one is valid for a PATCH through the other", async () => {
    const deployment = await createDeployment(one.admin, internalSourceBody(uniqueName("shared-src")));
    const path = await uploadSource(one.admin, deployment.id);
    const patched = await two.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      source_revision_config: { source_tarball_path: path },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.source_revision_config.source_tarball_path, path);
  });

  test("10 PATCHes spread over both at once: 11 revisions, none lost", async () => {
    const deployment = await createDeployment(one.admin, externalImageBody(uniqueName("spread")));
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? one : two).admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
          source_revision_config: { image_uri: `registry.local/agent:spread-${i}` },
        }),
      ),
    );
    for (const response of responses) assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(new Set(responses.map((r) => r.body.latest_revision_id)).size, 10);
    const revisions = await revisionsOf(two.admin, deployment.id);
    assert.equal(revisions.length, 11);
    const final = (await one.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body;
    assert.equal(final.latest_revision_id, revisions[0].id);
    assert.equal(final.source_revision_config.image_uri, revisions[0].source_revision_config.image_uri);
  });

  test("a long-poll on one is answered when the revision moves through the other", { timeout: 60_000 }, async () => {
    // No listener runs: the revision stays QUEUED until the interrupt through the other process.
    const deployment = await createDeployment(one.admin, externalImageBody(uniqueName("long-poll")));
    const path = `/v2/deployments/${deployment.id}/revisions/${deployment.latest_revision_id}`;
    // The wait outlasts the test's timeout: only hearing the move answers in time.
    const answer = one.admin.get<Revision>(`${path}?wait_seconds=300&while_status=QUEUED`);
    const interrupted = await two.admin.post<Revision>(`${path}/interrupt`, {});
    assert.equal(interrupted.status, 200, JSON.stringify(interrupted.body));
    const { status, body } = await answer;
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.status, "INTERRUPTED");
  });

  test("creates of one name through both at once: one 201, the rest 409", async () => {
    const name = uniqueName("both");
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? one : two).admin.post("/v2/deployments", externalImageBody(name))),
    );
    assert.deepEqual(
      responses.map((r) => r.status).sort(),
      [201, 409, 409, 409, 409, 409],
      JSON.stringify(responses.map((r) => r.body)),
    );
  });
});
