// Workspaces, API keys and repository-host integrations.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { beforeEach, describe, it } from "node:test";
import type { ControlPlaneStorage, IntegrationRecord } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { newApiKey, newTenant, tick } from "./fixtures.js";

export function accountsContract(backend: Backend): void {
  describe("tenants, api keys and integrations", () => {
    const db = databasePerTest(backend);
    let a: ControlPlaneStorage;
    let b: ControlPlaneStorage;

    beforeEach(() => {
      ({ a, b } = db);
    });

    it("stores api keys, tenants and integrations", async () => {
      const hash = randomBytes(32).toString("hex");
      const adminKey = newApiKey(hash, { all_tenants: true, name: "admin" });
      await a.apiKeys.create(adminKey);
      await a.apiKeys.create(newApiKey(hash, { name: "same hash" })); // left as it is
      assert.deepEqual(await a.apiKeys.findByHash(hash), adminKey);
      assert.equal(await a.apiKeys.findByHash("nope"), undefined);
      const scoped = newApiKey(randomBytes(32).toString("hex"), { tenant_ids: ["t1", "t2"] });
      await b.apiKeys.create(scoped);
      const keys = await a.apiKeys.list();
      assert.deepEqual(
        keys.filter((k) => k.id === adminKey.id || k.id === scoped.id),
        [adminKey, scoped],
      );
      const at = tick();
      const revoked = await a.apiKeys.revoke(scoped.id, at);
      assert.deepEqual(revoked, { ...scoped, revoked_at: at });
      assert.deepEqual(await a.apiKeys.revoke(scoped.id, tick()), revoked); // once
      assert.equal(await a.apiKeys.revoke("missing", tick()), undefined);

      const t = await newTenant(a);
      const tenantRecord = await a.tenants.get(t);
      assert.equal(tenantRecord?.id, t);
      assert.equal(await a.tenants.get("missing"), undefined);
      assert.ok((await a.tenants.list()).some((x) => x.id === t));

      const integration: IntegrationRecord = {
        id: randomUUID(),
        tenant_id: t,
        name: "org",
        provider: "repo_host",
        installation_id: 3_000_000_000,
        repos: [{ id: 1, name: "agent", owner: "org", url: "https://example.com/org/agent", default_branch: "main" }],
        created_at: tick(),
        kind: "github",
        base_url: "https://example.com",
        credentials_ciphertext: "sealed-credentials",
        webhook_secret_ciphertext: "sealed-secret",
      };
      await a.integrations.create(integration);
      const second: IntegrationRecord = {
        ...integration,
        id: randomUUID(),
        name: "org2",
        repos: [],
        created_at: tick(),
        kind: "git",
        base_url: null,
        credentials_ciphertext: null,
      };
      await a.integrations.create(second);
      assert.deepEqual(await a.integrations.get(t, integration.id), integration);
      assert.deepEqual(await b.integrations.getAny(integration.id), integration);
      assert.equal(await a.integrations.get("other", integration.id), undefined);
      assert.deepEqual(await b.integrations.list(t), [integration, second]);

      // Updates change only what they name; another workspace's id changes nothing.
      assert.equal(await a.integrations.update("other", second.id, { name: "x" }), undefined);
      const renamed = await b.integrations.update(t, second.id, {
        name: "renamed",
        repos: [{ id: 1, name: "r", owner: "o", url: "https://example.com/o/r", default_branch: "dev" }],
        credentials_ciphertext: "new-credentials",
      });
      assert.deepEqual(renamed, {
        ...second,
        name: "renamed",
        repos: [{ id: 1, name: "r", owner: "o", url: "https://example.com/o/r", default_branch: "dev" }],
        credentials_ciphertext: "new-credentials",
      });
      assert.deepEqual(await a.integrations.update(t, second.id, { credentials_ciphertext: null }), {
        ...renamed,
        credentials_ciphertext: null,
      });
      assert.deepEqual(await a.integrations.update(t, second.id, {}), { ...renamed, credentials_ciphertext: null });

      // A webhook delivery is recorded once.
      assert.equal(await a.integrations.recordDelivery(integration.id, "d-1", tick()), true);
      assert.equal(await b.integrations.recordDelivery(integration.id, "d-1", tick()), false);
      assert.equal(await b.integrations.recordDelivery(second.id, "d-1", tick()), true);

      assert.equal(await a.integrations.delete("other", second.id), false);
      assert.equal(await b.integrations.delete(t, second.id), true);
      assert.equal(await a.integrations.get(t, second.id), undefined);
      assert.equal(await a.integrations.delete(t, second.id), false);
    });

    it("lists workspaces oldest first, each as created", async () => {
      const at = tick();
      const tenants = [
        { id: "t-b", name: "B", created_at: at },
        { id: "t-a", name: "A", created_at: at },
        { id: "t-0", name: "Zero", created_at: tick() },
      ];
      for (const tenant of tenants) await a.tenants.create(tenant);
      // created_at, then id.
      assert.deepEqual(await b.tenants.list(), [tenants[1], tenants[0], tenants[2]]);
      assert.deepEqual(await b.tenants.get("t-0"), tenants[2]);
      assert.deepEqual(await b.integrations.list("t-a"), []);
    });
  });
}
