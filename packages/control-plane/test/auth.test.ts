import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  api,
  type ApiKey,
  assertError,
  type ControlPlane,
  createDeployment,
  type Deployment,
  externalImageBody,
  newDataDir,
  type Page,
  fetchJson,
  startControlPlane,
  type Tenant,
  uniqueName,
} from "@berth/test-support";

const MISSING = "Missing API key: send X-Api-Key (or Authorization: Bearer <key>)";
const INVALID = "Invalid API key";
const REVOKED = "API key has been revoked";
/** The refusal names the workspaces the key may choose from. */
const SEVERAL =
  /^This API key is valid for several workspaces and requires workspace specification: send X-Tenant-Id \(one of: [0-9a-f-]{36} "[^"]*"(, [0-9a-f-]{36} "[^"]*")+\)$/;
const noAccess = (id: string) => `API key has no access to workspace ${id}`;

describe("authentication and workspaces", () => {
  let cp: ControlPlane;
  let a: Tenant;
  let b: Tenant;
  let keyA: ApiKey;
  let keyAB: ApiKey;

  before(async () => {
    cp = await startControlPlane();
    [a, b] = await Promise.all([cp.createTenant("acme"), cp.createTenant("globex")]);
    [keyA, keyAB] = await Promise.all([
      cp.createKey({ tenants: [a.id], name: "ci" }),
      cp.createKey({ tenants: [a.id, b.id], name: "both" }),
    ]);
  });
  after(() => cp.stop());

  test("the CLI prints a created workspace and a key scoped to it", () => {
    assert.equal(a.name, "acme");
    assert.match(a.id, /^[0-9a-f-]{36}$/);
    assert.match(keyA.key, /^berth_[A-Za-z0-9_-]{43}$/);
    assert.equal(keyA.prefix, keyA.key.slice(0, 12));
    assert.deepEqual(keyA.tenant_ids, [a.id]);
    assert.equal(keyA.all_tenants, false);
    assert.equal(keyA.name, "ci");
    assert.deepEqual([...keyAB.tenant_ids].sort(), [a.id, b.id].sort());
  });

  test("keys list never shows a key, only its prefix", async () => {
    const keys = await cp.cli<Record<string, unknown>[]>(["keys", "list"]);
    assert.ok(Array.isArray(keys));
    const listed = keys.find((k) => k.id === keyA.id);
    assert.ok(listed, "the created key is listed");
    assert.equal(listed.prefix, keyA.prefix);
    const text = JSON.stringify(keys);
    assert.ok(!text.includes(keyA.key) && !text.includes(keyAB.key) && !text.includes(cp.adminKey), "no key in the listing");
  });

  test("no key: 401", async () => {
    for (const path of [
      "/v2/deployments",
      "/v2/listeners",
      "/v1/integrations/repo_host/install",
      `/v2/deployments/${randomUUID()}`,
    ]) {
      assertError(await api(cp.url).get(path), 401, MISSING);
    }
    assertError(await api(cp.url).post("/v2/deployments", externalImageBody(uniqueName("anon"))), 401, MISSING);
    assertError(await api(cp.url).post(`/v2/deployments/${randomUUID()}/upload-url`), 401, MISSING);
  });

  test("unknown key: 401", async () => {
    assertError(await api(cp.url, `berth_${"x".repeat(43)}`).get("/v2/deployments"), 401, INVALID);
    assertError(await api(cp.url, "not-even-a-berth-key").get("/v2/deployments"), 401, INVALID);
  });

  test("Authorization: Bearer is the same key; X-Api-Key wins when both are sent", async () => {
    const bearer = await fetchJson<Page<Deployment>>(`${cp.url}/v2/deployments`, "GET", undefined, {
      Authorization: `Bearer ${keyA.key}`,
    });
    assert.equal(bearer.status, 200);
    assert.ok(bearer.body.resources.every((d) => d.tenant_id === a.id));
    const bad = await fetchJson(`${cp.url}/v2/deployments`, "GET", undefined, {
      Authorization: `Bearer berth_${"y".repeat(43)}`,
    });
    assertError(bad, 401, INVALID);
    const both = await fetchJson(`${cp.url}/v2/deployments`, "GET", undefined, {
      "X-Api-Key": keyA.key,
      Authorization: `Bearer berth_${"y".repeat(43)}`,
    });
    assert.equal(both.status, 200);
    const wrongApiKey = await fetchJson(`${cp.url}/v2/deployments`, "GET", undefined, {
      "X-Api-Key": `berth_${"y".repeat(43)}`,
      Authorization: `Bearer ${keyA.key}`,
    });
    assertError(wrongApiKey, 401, INVALID);
  });

  test("a key for one workspace needs no X-Tenant-Id; what it creates belongs to that workspace", async () => {
    const client = api(cp.url, keyA.key);
    const deployment = await createDeployment(client, externalImageBody(uniqueName("a")));
    assert.equal(deployment.tenant_id, a.id);
    const list = await client.get<Page<Deployment>>("/v2/deployments");
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.resources.map((d) => d.id),
      [deployment.id],
    );
    const withHeader = await api(cp.url, keyA.key, a.id).get<Deployment>(`/v2/deployments/${deployment.id}`);
    assert.equal(withHeader.status, 200);
    assert.equal(withHeader.body.id, deployment.id);
  });

  test("a key for two workspaces without X-Tenant-Id: 403", async () => {
    assertError(await api(cp.url, keyAB.key).get("/v2/deployments"), 403, SEVERAL);
    assertError(await api(cp.url, keyAB.key).post("/v2/deployments", externalImageBody(uniqueName("ab"))), 403, SEVERAL);
  });

  test("a key for two workspaces with X-Tenant-Id (any case) reaches either", async () => {
    for (const [header, tenant] of [
      ["X-Tenant-Id", a.id],
      ["x-tenant-id", b.id],
      ["X-TENANT-ID", a.id],
    ] as const) {
      const response = await fetchJson<Page<Deployment>>(`${cp.url}/v2/deployments`, "GET", undefined, {
        "X-Api-Key": keyAB.key,
        [header]: tenant,
      });
      assert.equal(response.status, 200, `${header}: ${JSON.stringify(response.body)}`);
      assert.ok(response.body.resources.every((d) => d.tenant_id === tenant));
    }
    const inB = await createDeployment(api(cp.url, keyAB.key, b.id), externalImageBody(uniqueName("b")));
    assert.equal(inB.tenant_id, b.id);
  });

  test("X-Tenant-Id of a workspace the key cannot reach: 403", async () => {
    assertError(await api(cp.url, keyA.key, b.id).get("/v2/deployments"), 403, noAccess(b.id));
    const nowhere = randomUUID();
    assertError(await api(cp.url, keyA.key, nowhere).get("/v2/deployments"), 403, noAccess(nowhere));
    assertError(await api(cp.url, keyA.key, "not-a-uuid").get("/v2/deployments"), 403, noAccess("not-a-uuid"));
    assertError(await api(cp.url, keyAB.key, cp.defaultTenantId).get("/v2/listeners"), 403, noAccess(cp.defaultTenantId));
  });

  test("the admin key reaches every workspace but not one that does not exist", async () => {
    for (const tenant of [a.id, b.id, cp.defaultTenantId]) {
      const response = await api(cp.url, cp.adminKey, tenant).get<Page<Deployment>>("/v2/deployments");
      assert.equal(response.status, 200);
      assert.ok(response.body.resources.every((d) => d.tenant_id === tenant));
    }
    const nowhere = randomUUID();
    assertError(await api(cp.url, cp.adminKey, nowhere).get("/v2/deployments"), 403, noAccess(nowhere));
    assertError(await api(cp.url, cp.adminKey).get("/v2/deployments"), 403, SEVERAL);
  });

  test("a key created with --all-tenants reaches a workspace created after it", async () => {
    const all = await cp.createKey({ allTenants: true, name: "ops" });
    assert.equal(all.all_tenants, true);
    const later = await cp.createTenant("initech");
    const response = await api(cp.url, all.key, later.id).get<Page<Deployment>>("/v2/deployments");
    assert.equal(response.status, 200);
    assert.deepEqual(response.body.resources, []);
  });

  test("a revoked key: 403, at once and for every header form", async () => {
    const key = await cp.createKey({ tenants: [a.id], name: "temp" });
    const client = api(cp.url, key.key);
    assert.equal((await client.get("/v2/deployments")).status, 200);
    const revoked = await cp.revokeKey(key.id);
    assert.equal(revoked.id, key.id);
    assert.ok(!Number.isNaN(Date.parse(revoked.revoked_at)));
    assertError(await client.get("/v2/deployments"), 403, REVOKED);
    assertError(await api(cp.url, key.key, a.id).get("/v2/listeners"), 403, REVOKED);
    const bearer = await fetchJson(`${cp.url}/v2/deployments`, "GET", undefined, { Authorization: `Bearer ${key.key}` });
    assertError(bearer, 403, REVOKED);
    assert.equal((await api(cp.url, keyA.key).get("/v2/deployments")).status, 200, "other keys keep working");
  });

  test("/ok, /openapi.json and /docs need no key", async () => {
    for (const path of ["/ok", "/api-host/ok"]) {
      const response = await api(cp.url).get(path);
      assert.equal(response.status, 200, path);
      assert.deepEqual(response.body, { ok: true });
    }
    for (const path of ["/openapi.json", "/api-host/openapi.json"]) {
      const response = await api(cp.url).get<{ paths: Record<string, unknown> }>(path);
      assert.equal(response.status, 200, path);
      assert.ok("/v2/deployments" in response.body.paths);
    }
    assert.equal((await fetch(`${cp.url}/docs`)).status, 200);
  });

  test("CLI tenants list shows every workspace", async () => {
    const tenants = await cp.cli<Tenant[]>(["tenants", "list"]);
    const names = new Map(tenants.map((t) => [t.id, t.name]));
    assert.equal(names.get(cp.defaultTenantId), "default");
    assert.equal(names.get(a.id), "acme");
    assert.equal(names.get(b.id), "globex");
  });
});

describe("first start without BERTH_ADMIN_API_KEY", () => {
  const KEY = /\bberth_[A-Za-z0-9_-]{43}\b/g;

  test("creates the default workspace and an admin key, prints the key once, and keeps both across a restart", async () => {
    const dataDir = newDataDir();
    const env = { BERTH_ADMIN_API_KEY: undefined, BERTH_DEFAULT_TENANT_ID: undefined };
    let cp = await startControlPlane({ dataDir, env });
    try {
      const keys = [...new Set(cp.output().match(KEY) ?? [])];
      assert.equal(keys.length, 1, `one key printed:\n${cp.output()}`);
      const tenants = await cp.cli<Tenant[]>(["tenants", "list"]);
      assert.deepEqual(
        tenants.map((t) => t.name),
        ["default"],
      );
      const tenant = tenants[0].id;
      assert.ok(cp.output().includes(tenant), "the workspace id is printed");
      const listed = await cp.cli<{ all_tenants: boolean; prefix: string }[]>(["keys", "list"]);
      assert.deepEqual(
        listed.map((k) => [k.all_tenants, k.prefix]),
        [[true, keys[0].slice(0, 12)]],
      );
      const response = await api(cp.url, keys[0], tenant).get<Page<Deployment>>("/v2/deployments");
      assert.equal(response.status, 200);
      await cp.stop();

      cp = await startControlPlane({ dataDir, env });
      assert.deepEqual(cp.output().match(KEY) ?? [], [], "the key is printed only on the first start");
      assert.equal((await api(cp.url, keys[0], tenant).get("/v2/deployments")).status, 200);
      assert.deepEqual(
        (await cp.cli<Tenant[]>(["tenants", "list"])).map((t) => t.id),
        [tenant],
      );
    } finally {
      await cp.stop();
    }
  });

  test("BERTH_ADMIN_API_KEY and BERTH_DEFAULT_TENANT_ID are used instead", async () => {
    const cp = await startControlPlane();
    try {
      assert.deepEqual(
        (await cp.cli<Tenant[]>(["tenants", "list"])).map((t) => [t.id, t.name]),
        [[cp.defaultTenantId, "default"]],
      );
      assert.equal((await api(cp.url, cp.adminKey, cp.defaultTenantId).get("/v2/deployments")).status, 200);
    } finally {
      await cp.stop();
    }
  });
});
