import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type Api,
  api,
  type ControlPlane,
  type Deployment,
  type ErrorBody,
  IMAGE,
  internalSourceBody,
  makeTarball,
  type Page,
  put,
  type Revision,
  startControlPlane,
  uniqueName,
  type Uploaded,
  type UploadUrl,
} from "@berth/test-support";

const DEPLOYMENT_FIELDS = [
  "id",
  "tenant_id",
  "name",
  "source",
  "source_config",
  "source_revision_config",
  "secrets",
  "secret_references",
  "created_at",
  "updated_at",
  "status",
  "latest_revision_id",
  "active_revision_id",
  "image_version",
];
const REVISION_FIELDS = [
  "id",
  "deployment_id",
  "status",
  "status_message",
  "source",
  "source_revision_config",
  "created_at",
  "updated_at",
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function assertTimestamp(value: unknown, what: string): void {
  assert.equal(typeof value, "string", `${what} is not a string`);
  assert.ok(!Number.isNaN(Date.parse(value as string)), `${what} is not a date-time: ${value}`);
}

/** The spec's quick start (create, get, revisions, patch, list, delete) against one base URL. */
async function quickStart(client: Api, tenantId: string): Promise<void> {
  const name = uniqueName("quick");
  const created = await client.post<Deployment>("/v2/deployments", {
    name,
    source: "external_image",
    source_config: {},
    source_revision_config: { image_uri: IMAGE },
    secrets: [{ name: "OPENAI_API_KEY", value: "sk-1" }],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const deployment = created.body;
  for (const field of DEPLOYMENT_FIELDS) assert.ok(field in deployment, `Deployment has no ${field}`);
  assert.match(deployment.id, UUID);
  assert.equal(deployment.tenant_id, tenantId);
  assert.equal(deployment.name, name);
  assert.equal(deployment.source, "external_image");
  assert.equal(deployment.source_config.resource_spec, null, "resource_spec is null when never set");
  assert.equal(deployment.source_revision_config.image_uri, IMAGE);
  assert.equal(deployment.source_revision_config.graph_config_path ?? null, null);
  assert.deepEqual(deployment.secrets, [{ name: "OPENAI_API_KEY", value: "********" }]);
  assert.ok(deployment.secret_references === null || Array.isArray(deployment.secret_references));
  assertTimestamp(deployment.created_at, "created_at");
  assertTimestamp(deployment.updated_at, "updated_at");
  assert.equal(deployment.status, "AWAITING_DATABASE");
  assert.match(deployment.latest_revision_id ?? "", UUID);
  assert.equal(deployment.active_revision_id, null);
  assert.equal(deployment.image_version, null);
  assert.ok(!JSON.stringify(deployment).includes("sk-1"), "the secret value leaks");

  const got = await client.get<Deployment>(`/v2/deployments/${deployment.id}`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.body, deployment);

  const revisions = await client.get<Page<Revision>>(`/v2/deployments/${deployment.id}/revisions`);
  assert.equal(revisions.status, 200);
  assert.equal(revisions.body.resources.length, 1);
  const first = revisions.body.resources[0];
  assert.equal(first.id, deployment.latest_revision_id);
  assert.equal(first.status, "QUEUED");

  const revision = await client.get<Revision>(`/v2/deployments/${deployment.id}/revisions/${first.id}`);
  assert.equal(revision.status, 200);
  for (const field of REVISION_FIELDS) assert.ok(field in revision.body, `Revision has no ${field}`);
  assert.equal(revision.body.id, first.id);
  assert.equal(revision.body.deployment_id, deployment.id);
  assert.equal(revision.body.status, "QUEUED");
  assert.equal(revision.body.source, "external_image");
  assert.equal(revision.body.source_revision_config.image_uri, IMAGE);
  assertTimestamp(revision.body.created_at, "revision created_at");
  assertTimestamp(revision.body.updated_at, "revision updated_at");

  const patched = await client.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
    secrets: [
      { name: "OPENAI_API_KEY", value: "sk-2" },
      { name: "EXTRA", value: "x" },
    ],
  });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.notEqual(patched.body.latest_revision_id, deployment.latest_revision_id);
  assert.deepEqual(patched.body.secrets, [
    { name: "OPENAI_API_KEY", value: "********" },
    { name: "EXTRA", value: "********" },
  ]);
  assert.equal(patched.body.source_revision_config.image_uri, IMAGE, "a new revision copies what it does not set");
  const after = await client.get<Page<Revision>>(`/v2/deployments/${deployment.id}/revisions`);
  assert.deepEqual(
    after.body.resources.map((r) => r.id),
    [patched.body.latest_revision_id, deployment.latest_revision_id],
    "newest first",
  );
  assert.equal(after.body.resources[0].status, "QUEUED");
  assert.equal(after.body.resources[1].status, "SKIPPED");
  assert.match(after.body.resources[1].status_message ?? "", /^Superseded by revision/);

  const list = await client.get<Page<Deployment>>(`/v2/deployments?name_contains=${name}`);
  assert.equal(list.status, 200);
  for (const shown of [list.body, after.body, patched.body]) {
    assert.ok(!/sk-1|sk-2|"x"/.test(JSON.stringify(shown)), "no secret value in any answer");
  }
  assert.deepEqual(
    list.body.resources.map((d) => d.id),
    [deployment.id],
  );
  assert.deepEqual(list.body.resources[0], (await client.get<Deployment>(`/v2/deployments/${deployment.id}`)).body);

  const deleted = await client.delete(`/v2/deployments/${deployment.id}`);
  assert.equal(deleted.status, 204);
  assert.equal(deleted.body, null, "204 has an empty body");
  const gone = await client.get<ErrorBody>(`/v2/deployments/${deployment.id}`);
  assert.equal(gone.status, 404);
  assert.equal(typeof gone.body.detail, "string");
  const listed = await client.get<Page<Deployment>>(`/v2/deployments?name_contains=${name}`);
  assert.deepEqual(listed.body.resources, [], "a deleted deployment leaves listings");
}

describe("quick start", () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane();
  });
  after(() => cp.stop());

  test("create, get, revisions, patch, list and delete an external_image deployment", async () => {
    await quickStart(cp.admin, cp.defaultTenantId);
  });

  test("the same flow under the self-hosted prefix /api-host", async () => {
    await quickStart(api(`${cp.url}/api-host`, cp.adminKey, cp.defaultTenantId), cp.defaultTenantId);
  });

  test("GET /ok answers {ok: true}", async () => {
    const response = await api(cp.url).get("/ok");
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { ok: true });
  });

  test("internal_source: revision 1 waits for the tarball, the PATCH with the uploaded path queues revision 2", async () => {
    const created = await cp.admin.post<Deployment>("/v2/deployments", internalSourceBody(uniqueName("src")));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const deployment = created.body;
    assert.equal(deployment.source, "internal_source");
    assert.equal(deployment.source_revision_config.graph_config_path, "langgraph.json");
    assert.equal(deployment.source_revision_config.source_tarball_path ?? null, null);
    const [first] = (await cp.admin.get<Page<Revision>>(`/v2/deployments/${deployment.id}/revisions`)).body.resources;
    assert.equal(first.id, deployment.latest_revision_id);
    assert.equal(first.status, "CREATING");
    assert.equal(
      first.status_message,
      "Waiting for the source tarball: request an upload URL, PUT the tarball, then PATCH source_revision_config.source_tarball_path",
    );

    const issued = await cp.admin.post<UploadUrl>(`/v2/deployments/${deployment.id}/upload-url`);
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    assert.match(issued.body.object_path, new RegExp(`^deployments/${deployment.id}/sources/[^/]+\\.tar\\.gz$`));
    const tarball = makeTarball();
    const uploaded = await put<Uploaded>(issued.body.upload_url, tarball);
    assert.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
    assert.equal(uploaded.body.object_path, issued.body.object_path);
    assert.equal(uploaded.body.size_bytes, tarball.length);

    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      source_revision_config: { source_tarball_path: issued.body.object_path },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.source_revision_config.source_tarball_path, issued.body.object_path);
    assert.equal(patched.body.source_revision_config.graph_config_path, "langgraph.json");
    assert.notEqual(patched.body.latest_revision_id, deployment.latest_revision_id);
    const revisions = (await cp.admin.get<Page<Revision>>(`/v2/deployments/${deployment.id}/revisions`)).body.resources;
    assert.deepEqual(
      revisions.map((r) => [r.id, r.status]),
      [
        [patched.body.latest_revision_id, "QUEUED"],
        [deployment.latest_revision_id, "SKIPPED"],
      ],
    );
    // It never had source: it says it waited for the upload that came with revision 2.
    assert.equal(
      revisions[1].status_message,
      `No source: waited for an upload, which came with revision 2 (${patched.body.latest_revision_id})`,
    );
    assert.equal(revisions[0].source_revision_config.source_tarball_path, issued.body.object_path);
  });

  for (const prefix of ["", "/api-host"]) {
    test(`${prefix}/openapi.json describes /v2/deployments without a key`, async () => {
      const response = await api(cp.url).get<{ openapi?: string; paths: Record<string, unknown> }>(`${prefix}/openapi.json`);
      assert.equal(response.status, 200);
      assert.ok("/v2/deployments" in response.body.paths, Object.keys(response.body.paths).join(", "));
      assert.ok(
        Object.keys(response.body.paths).some((path) => path.startsWith("/v2/deployments/")),
        "the per-deployment paths are described",
      );
    });
  }

  test("every route answers the same under /api-host as at /", async () => {
    const deployment = (await cp.admin.post<Deployment>("/v2/deployments", internalSourceBody(uniqueName("prefix")))).body;
    const listener = await cp.admin.post<{ id: string }>("/v2/listeners", { compute_type: "local", compute_id: "prefix-box" });
    assert.equal(listener.status, 201);
    const integration = await cp.addIntegration(cp.defaultTenantId, "gh-prefix", ["https://github.com/acme/prefix"]);
    const hosted = api(`${cp.url}/api-host`, cp.adminKey, cp.defaultTenantId);
    for (const path of [
      `/v2/deployments/${deployment.id}`,
      `/v2/deployments/${deployment.id}/revisions`,
      `/v2/deployments/${deployment.id}/revisions/${deployment.latest_revision_id}`,
      "/v2/listeners",
      `/v2/listeners/${listener.body.id}`,
      "/v1/integrations/repo_host/install",
      `/v1/integrations/repo_host/${integration.id}/repos`,
    ]) {
      const [root, prefixed] = await Promise.all([cp.admin.get(path), hosted.get(path)]);
      assert.equal(root.status, 200, path);
      assert.equal(prefixed.status, 200, `/api-host${path}`);
      assert.deepEqual(prefixed.body, root.body, path);
    }
    for (const path of [`/deployments/${deployment.id}/upload-url`, `/v2/deployments/${deployment.id}/upload-url`]) {
      const issued = await hosted.post<UploadUrl>(path);
      assert.equal(issued.status, 200, `/api-host${path}`);
      assert.ok(issued.body.upload_url.startsWith(`${cp.url}/api-host/v2/uploads/`), issued.body.upload_url);
    }
    const missing = await hosted.get<ErrorBody>(`/v2/deployments/${crypto.randomUUID()}`);
    assert.equal(missing.status, 404);
    assert.equal((await fetch(`${cp.url}/api-host/docs`)).status, 200);
  });

  test("/docs answers 200", async () => {
    const response = await fetch(`${cp.url}/docs`);
    assert.equal(response.status, 200);
    assert.match(await response.text(), /<html/i);
  });
});
