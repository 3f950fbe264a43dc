import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  type Api,
  api,
  type ControlPlane,
  createDeployment,
  type Deployment,
  type ErrorBody,
  externalImageBody,
  type Integration,
  internalSourceBody,
  type Listener,
  type Page,
  type Response,
  revisionsOf,
  startControlPlane,
  uniqueName,
  uploadSource,
} from "@berth/test-support";

interface OfA {
  ext: Deployment;
  src: Deployment;
  listener: Listener;
  integration: Integration;
  uploadedPath: string;
}

describe("tenant isolation", () => {
  let cp: ControlPlane;
  let clientA: Api;
  let clientB: Api;
  let tenantA: string;
  let tenantB: string;
  let a: OfA;

  before(async () => {
    cp = await startControlPlane();
    const [ta, tb] = await Promise.all([cp.createTenant("tenant-a"), cp.createTenant("tenant-b")]);
    tenantA = ta.id;
    tenantB = tb.id;
    const [keyA, keyB, integration] = await Promise.all([
      cp.createKey({ tenants: [tenantA] }),
      cp.createKey({ tenants: [tenantB] }),
      cp.addIntegration(tenantA, "gh-a", ["https://github.com/acme/agent#main"]),
    ]);
    clientA = api(cp.url, keyA.key);
    clientB = api(cp.url, keyB.key);
    const ext = await createDeployment(clientA, externalImageBody(uniqueName("shared-name")));
    const src = await createDeployment(clientA, internalSourceBody(uniqueName("src")));
    const uploadedPath = await uploadSource(clientA, src.id);
    const listener = await clientA.post<Listener>("/v2/listeners", { compute_type: "docker", compute_id: "docker-host-1" });
    assert.equal(listener.status, 201, JSON.stringify(listener.body));
    a = { ext, src, listener: listener.body, integration, uploadedPath };
  });
  after(() => cp.stop());

  /** A 404 whose detail reads exactly like the one for an id that never existed. */
  async function assertHidden(
    foreign: Response<unknown>,
    foreignId: string,
    missing: () => Promise<Response<unknown>>,
    missingId: string,
  ) {
    assert.equal(foreign.status, 404, JSON.stringify(foreign.body));
    const unknown = await missing();
    assert.equal(unknown.status, 404);
    const detail = (response: Response<unknown>, id: string) =>
      String((response.body as ErrorBody).detail).replaceAll(id, "<id>");
    assert.equal(detail(foreign, foreignId), detail(unknown, missingId), "a foreign id answers like an unknown one");
  }

  test("A's deployment: GET, PATCH, DELETE from B are 404 and change nothing", async () => {
    const id = a.ext.id;
    const missing = randomUUID();
    await assertHidden(await clientB.get(`/v2/deployments/${id}`), id, () => clientB.get(`/v2/deployments/${missing}`), missing);
    const patch = { source_revision_config: { image_uri: "registry.local/hijack:1" } };
    await assertHidden(
      await clientB.patch(`/v2/deployments/${id}`, patch),
      id,
      () => clientB.patch(`/v2/deployments/${missing}`, patch),
      missing,
    );
    await assertHidden(
      await clientB.delete(`/v2/deployments/${id}`),
      id,
      () => clientB.delete(`/v2/deployments/${missing}`),
      missing,
    );
    const still = await clientA.get<Deployment>(`/v2/deployments/${id}`);
    assert.equal(still.status, 200);
    assert.deepEqual(still.body, a.ext);
    assert.equal((await revisionsOf(clientA, id)).length, 1);
  });

  test("A's revisions: list and get from B are 404", async () => {
    const id = a.ext.id;
    const revision = a.ext.latest_revision_id!;
    const missing = randomUUID();
    await assertHidden(
      await clientB.get(`/v2/deployments/${id}/revisions`),
      id,
      () => clientB.get(`/v2/deployments/${missing}/revisions`),
      missing,
    );
    const foreign = await clientB.get(`/v2/deployments/${id}/revisions/${revision}`);
    assert.equal(foreign.status, 404);
    assert.equal((await clientA.get(`/v2/deployments/${id}/revisions/${revision}`)).status, 200);
  });

  test("A's upload-url, on both paths, from B is 404", async () => {
    const id = a.src.id;
    const missing = randomUUID();
    for (const prefix of ["/v2/deployments", "/deployments"]) {
      await assertHidden(
        await clientB.post(`${prefix}/${id}/upload-url`),
        id,
        () => clientB.post(`${prefix}/${missing}/upload-url`),
        missing,
      );
    }
  });

  test("A's listener: GET, PATCH, DELETE from B are 404 and change nothing", async () => {
    const id = a.listener.id;
    const missing = randomUUID();
    await assertHidden(await clientB.get(`/v2/listeners/${id}`), id, () => clientB.get(`/v2/listeners/${missing}`), missing);
    const patch = { version: "9.9.9" };
    await assertHidden(
      await clientB.patch(`/v2/listeners/${id}`, patch),
      id,
      () => clientB.patch(`/v2/listeners/${missing}`, patch),
      missing,
    );
    await assertHidden(
      await clientB.delete(`/v2/listeners/${id}`),
      id,
      () => clientB.delete(`/v2/listeners/${missing}`),
      missing,
    );
    const still = await clientA.get<Listener>(`/v2/listeners/${id}`);
    assert.equal(still.status, 200);
    assert.deepEqual(still.body, a.listener);
  });

  test("A's integration repos from B are 404", async () => {
    const id = a.integration.id;
    const missing = randomUUID();
    await assertHidden(
      await clientB.get(`/v1/integrations/repo_host/${id}/repos`),
      id,
      () => clientB.get(`/v1/integrations/repo_host/${missing}/repos`),
      missing,
    );
    assert.equal((await clientA.get(`/v1/integrations/repo_host/${id}/repos`)).status, 200);
  });

  test("bulk delete of A's id from B: 404, and A's deployment still exists", async () => {
    const response = await clientB.delete<{ results: { deployment_id: string }[] }>(`/v2/deployments?deployment_ids=${a.ext.id}`);
    assert.equal(response.status, 404, JSON.stringify(response.body));
    assert.deepEqual(
      response.body.results.map((r) => r.deployment_id),
      [a.ext.id],
    );
    assert.equal((await clientA.get(`/v2/deployments/${a.ext.id}`)).status, 200);
  });

  test("bulk delete of B's and A's ids from B: 207, only B's is deleted", async () => {
    const own = await createDeployment(clientB, externalImageBody(uniqueName("b-own")));
    const response = await clientB.delete<{ results: { deployment_id: string }[] }>(
      `/v2/deployments?deployment_ids=${own.id},${a.ext.id}`,
    );
    assert.equal(response.status, 207, JSON.stringify(response.body));
    assert.deepEqual(response.body.results.map((r) => r.deployment_id).sort(), [own.id, a.ext.id].sort());
    assert.equal((await clientB.get(`/v2/deployments/${own.id}`)).status, 404);
    assert.equal((await clientA.get(`/v2/deployments/${a.ext.id}`)).status, 200);
  });

  test("B's lists show none of A's objects", async () => {
    const deployments = await clientB.get<Page<Deployment>>("/v2/deployments?limit=100");
    assert.equal(deployments.status, 200);
    assert.ok(deployments.body.resources.every((d) => d.tenant_id === tenantB));
    const filtered = await clientB.get<Page<Deployment>>(`/v2/deployments?deployment_ids=${a.ext.id},${a.src.id}`);
    assert.deepEqual(filtered.body.resources, []);
    const named = await clientB.get<Page<Deployment>>(`/v2/deployments?name_contains=${a.ext.name}`);
    assert.deepEqual(named.body.resources, []);
    const listeners = await clientB.get<Page<Listener>>("/v2/listeners?limit=100");
    assert.equal(listeners.status, 200);
    assert.deepEqual(listeners.body.resources, []);
    const integrations = await clientB.get<{ id: string }[]>("/v1/integrations/repo_host/install");
    assert.equal(integrations.status, 200);
    assert.deepEqual(integrations.body, []);
    const ofA = await clientA.get<{ id: string }[]>("/v1/integrations/repo_host/install");
    assert.deepEqual(
      ofA.body.map((i) => i.id),
      [a.integration.id],
    );
  });

  test("names and listener compute ids are per workspace", async () => {
    const same = await clientB.post<Deployment>("/v2/deployments", externalImageBody(a.ext.name));
    assert.equal(same.status, 201, JSON.stringify(same.body));
    assert.equal(same.body.tenant_id, tenantB);
    assert.notEqual(same.body.id, a.ext.id);
    const listener = await clientB.post<Listener>("/v2/listeners", { compute_type: "docker", compute_id: "docker-host-1" });
    assert.equal(listener.status, 201, JSON.stringify(listener.body));
    assert.equal(listener.body.tenant_id, tenantB);
    // A's copy is untouched, and still reachable by A only.
    assert.deepEqual((await clientA.get(`/v2/deployments/${a.ext.id}`)).body, a.ext);
  });

  test("B cannot use A's listener or A's uploaded source", async () => {
    const withListener = await clientB.post<ErrorBody>(
      "/v2/deployments",
      externalImageBody(uniqueName("b-listener"), { source_config: { listener_id: a.listener.id } }),
    );
    assert.equal(withListener.status, 400, JSON.stringify(withListener.body));
    assert.match(String(withListener.body.detail), /listener/i);
    const srcB = await createDeployment(clientB, internalSourceBody(uniqueName("b-src")));
    const stolen = await clientB.patch<ErrorBody>(`/v2/deployments/${srcB.id}`, {
      source_revision_config: { source_tarball_path: a.uploadedPath },
    });
    assert.equal(stolen.status, 400, JSON.stringify(stolen.body));
    assert.match(String(stolen.body.detail), /source_tarball_path/);
  });

  test("the admin key sees A's objects only with A's X-Tenant-Id", async () => {
    const inA = await api(cp.url, cp.adminKey, tenantA).get(`/v2/deployments/${a.ext.id}`);
    assert.equal(inA.status, 200);
    const inB = await api(cp.url, cp.adminKey, tenantB).get(`/v2/deployments/${a.ext.id}`);
    assert.equal(inB.status, 404);
  });
});
