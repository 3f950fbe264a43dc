import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
  type Api,
  api,
  type ControlPlane,
  createDeployment,
  type Deployment,
  externalImageBody,
  type Integration,
  internalSourceBody,
  type Listener,
  newDataDir,
  type Page,
  type Revision,
  revisionsOf,
  startControlPlane,
  uniqueName,
  uploadSource,
} from "@berth/test-support";
import { storedText } from "./helpers/storage.js";

/** The value, or its hex or base64 form, appears in the text. */
function leaks(text: string, value: string): boolean {
  const bytes = Buffer.from(value);
  return [value, bytes.toString("hex"), bytes.toString("base64")].some((form) => text.includes(form));
}

interface Written {
  ext: Deployment;
  src: Deployment;
  deletedId: string;
  deletedName: string;
  uploadedPath: string;
  listener: Listener;
  integration: Integration;
  tenantKey: string;
  tenantId: string;
}

/** Everything the API shows of the records written before the crash. */
async function readBack(client: Api, w: Written) {
  const get = async <T>(path: string) => {
    const response = await client.get<T>(path);
    assert.equal(response.status, 200, `${path}: ${JSON.stringify(response.body)}`);
    return response.body;
  };
  return {
    ext: await get<Deployment>(`/v2/deployments/${w.ext.id}`),
    src: await get<Deployment>(`/v2/deployments/${w.src.id}`),
    extRevisions: await revisionsOf(client, w.ext.id),
    srcRevisions: await revisionsOf(client, w.src.id),
    firstRevision: await get<Revision>(`/v2/deployments/${w.ext.id}/revisions/${w.ext.latest_revision_id}`),
    deployments: await get<Page<Deployment>>("/v2/deployments?limit=100"),
    listener: await get<Listener>(`/v2/listeners/${w.listener.id}`),
    listeners: await get<Page<Listener>>("/v2/listeners"),
    integrations: await get<unknown[]>("/v1/integrations/repo_host/install"),
    repos: await get<unknown[]>(`/v1/integrations/repo_host/${w.integration.id}/repos`),
  };
}

describe("durability across a crash (SIGKILL) and restart", () => {
  const dataDir = newDataDir();
  let cp: ControlPlane;
  let written: Written;
  let before: Awaited<ReturnType<typeof readBack>>;
  after(() => cp.stop());

  test("writes deployments, revisions, secrets, an upload, a listener and an integration", async () => {
    cp = await startControlPlane({ dataDir });
    const client = cp.admin;
    const ext = await createDeployment(
      client,
      externalImageBody(uniqueName("durable"), {
        secrets: [
          { name: "OPENAI_API_KEY", value: "sk-durable-plaintext-1" },
          { name: "OTHER", value: "other-plaintext-2" },
        ],
      }),
    );
    const patched = await client.patch<Deployment>(`/v2/deployments/${ext.id}`, {
      source_revision_config: { image_uri: "registry.local/agent:2" },
      resource_spec: { cpu: 0.5, memory_mb: 512 },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const src = await createDeployment(client, internalSourceBody(uniqueName("durable-src")));
    const uploadedPath = await uploadSource(client, src.id);
    const doomed = await createDeployment(client, externalImageBody(uniqueName("doomed")));
    assert.equal((await client.delete(`/v2/deployments/${doomed.id}`)).status, 204);
    const listener = await client.post<Listener>("/v2/listeners", {
      compute_type: "cluster",
      compute_id: "durable-cluster",
      compute_config: { cluster_namespaces: ["prod"] },
      version: "0.1.0",
    });
    assert.equal(listener.status, 201, JSON.stringify(listener.body));
    const integration = await cp.addIntegration(cp.defaultTenantId, "gh", ["https://github.com/acme/agent#main"]);
    const tenant = await cp.createTenant("durable-tenant");
    const key = await cp.createKey({ tenants: [tenant.id] });
    written = {
      ext,
      src,
      deletedId: doomed.id,
      deletedName: doomed.name,
      uploadedPath,
      listener: listener.body,
      integration,
      tenantKey: key.key,
      tenantId: tenant.id,
    };
    before = await readBack(client, written);
    assert.equal(before.extRevisions.length, 2);
    assert.deepEqual(before.ext.secrets, [
      { name: "OPENAI_API_KEY", value: "********" },
      { name: "OTHER", value: "********" },
    ]);
  });

  test("after kill -9 and a restart on the same data dir, the API shows the same records", async () => {
    await cp.kill();
    cp = await startControlPlane({ dataDir, adminKey: cp.adminKey, defaultTenantId: cp.defaultTenantId });
    const now = await readBack(cp.admin, written);
    assert.deepEqual(now, before);
    assert.deepEqual(
      now.extRevisions.map((r) => [r.id, r.status]),
      before.extRevisions.map((r) => [r.id, r.status]),
    );
  });

  test("a deleted deployment stays deleted, and its name is free", async () => {
    assert.equal((await cp.admin.get(`/v2/deployments/${written.deletedId}`)).status, 404);
    const reused = await cp.admin.post<Deployment>("/v2/deployments", externalImageBody(written.deletedName));
    assert.equal(reused.status, 201, JSON.stringify(reused.body));
    assert.notEqual(reused.body.id, written.deletedId);
  });

  test("keys and workspaces created with the CLI still work", async () => {
    const response = await api(cp.url, written.tenantKey).get<Page<Deployment>>("/v2/deployments");
    assert.equal(response.status, 200);
    assert.deepEqual(response.body.resources, []);
  });

  test("stored secret values survive: sending them back masked is accepted and makes a revision", async () => {
    const response = await cp.admin.patch<Deployment>(`/v2/deployments/${written.ext.id}`, {
      secrets: [
        { name: "OPENAI_API_KEY", value: "********" },
        { name: "OTHER", value: "********" },
        { name: "NEW_ONE", value: "new-plaintext-3" },
      ],
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.deepEqual(
      response.body.secrets.map((s) => s.value),
      ["********", "********", "********"],
    );
    assert.equal((await revisionsOf(cp.admin, written.ext.id)).length, 3);
    assert.equal(response.body.source_revision_config.image_uri, "registry.local/agent:2");
    assert.equal(response.body.source_config.resource_spec?.cpu, 0.5);
    const unknown = await cp.admin.patch(`/v2/deployments/${written.ext.id}`, {
      secrets: [{ name: "NEVER_STORED", value: "********" }],
    });
    assert.equal(unknown.status, 400, "a masked value still needs a stored one");
  });

  test("the object uploaded before the crash is still valid for the PATCH", async () => {
    const response = await cp.admin.patch<Deployment>(`/v2/deployments/${written.src.id}`, {
      source_revision_config: { source_tarball_path: written.uploadedPath },
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const revisions = await revisionsOf(cp.admin, written.src.id);
    assert.deepEqual(
      revisions.map((r) => r.status),
      ["QUEUED", "SKIPPED"],
    );
    assert.equal(revisions[0].source_revision_config.source_tarball_path, written.uploadedPath);
  });

  test("the listener is still in use and can be patched", async () => {
    const patched = await cp.admin.patch<Listener>(`/v2/listeners/${written.listener.id}`, { version: "0.2.0" });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.version, "0.2.0");
    assert.equal(patched.body.compute_id, "durable-cluster");
  });

  test("secret values and API keys are not stored in clear; the default secrets key file is private", async () => {
    const text = await storedText(dataDir);
    assert.ok(text.includes(written.ext.name), "the scan sees what was stored (control)");
    for (const value of ["sk-durable-plaintext-1", "other-plaintext-2", "new-plaintext-3"])
      assert.ok(!leaks(text, value), `secret value ${value} is stored in clear`);
    assert.ok(!leaks(text, written.tenantKey), "an API key is stored in clear");
    assert.ok(!leaks(text, cp.adminKey), "the admin key is stored in clear");
    const mode = statSync(join(dataDir, "secrets.key")).mode & 0o777;
    assert.equal(mode, 0o600, `secrets.key mode ${mode.toString(8)}`);
  });

  test("a graceful stop and restart shows the writes made after the first restart", async () => {
    const expected = await readBack(cp.admin, written);
    await cp.stop();
    cp = await startControlPlane({ dataDir, adminKey: cp.adminKey, defaultTenantId: cp.defaultTenantId });
    assert.deepEqual(await readBack(cp.admin, written), expected);
  });
});
