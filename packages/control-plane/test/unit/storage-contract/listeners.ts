// Listeners: unique compute ids, one default per workspace, deletion only
// when no live deployment uses them.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { beforeEach, describe, it } from "node:test";
import type { ControlPlaneStorage } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { created, isConflict, newListener, newTenant, tick } from "./fixtures.js";

export function listenersContract(backend: Backend): void {
  describe("listeners", () => {
    const db = databasePerTest(backend);
    let a: ControlPlaneStorage;
    let b: ControlPlaneStorage;

    beforeEach(() => {
      ({ a, b } = db);
    });

    it("refuses duplicate listener compute ids and deleting listeners in use", async () => {
      const t = await newTenant(a);
      const first = newListener(t, "cluster-1");
      await a.listeners.create(first);
      assert.deepEqual(await a.listeners.get(t, first.id), first);
      assert.equal(await a.listeners.get("other", first.id), undefined);
      await assert.rejects(
        a.listeners.create(newListener(t, "cluster-1")),
        isConflict('A listener with compute_id "cluster-1" already exists'),
      );
      const racers = await Promise.allSettled([b, a, b].map((s) => s.listeners.create(newListener(t, "cluster-2"))));
      assert.equal(racers.filter((r) => r.status === "fulfilled").length, 1);
      const other = await newTenant(a);
      await a.listeners.create(newListener(other, "cluster-1"));

      const listed = await a.listeners.list(t, 10, 0);
      assert.deepEqual(
        listed.map((l) => l.compute_id),
        ["cluster-2", "cluster-1"],
      );
      assert.deepEqual(await a.listeners.list(t, 1, 1), [first]);

      const at = tick();
      const updated = await a.listeners.update(t, first.id, {
        compute_config: { cluster_namespaces: null },
        version: "1.2.3",
        default: false,
        updated_at: at,
      });
      assert.deepEqual(updated, { ...first, compute_config: { cluster_namespaces: null }, version: "1.2.3", updated_at: at });
      assert.deepEqual(await a.listeners.get(t, first.id), updated);
      assert.equal(
        await a.listeners.update("other", first.id, {
          compute_config: { cluster_namespaces: [] },
          version: null,
          default: false,
          updated_at: at,
        }),
        undefined,
      );

      const user = await created(a, t, "on-listener", { sourceConfig: { listener_id: first.id } });
      await assert.rejects(
        a.listeners.delete(t, first.id),
        isConflict(`Listener ${first.id} is used by a deployment; delete its deployments first`),
      );
      assert.equal(await a.listeners.delete("other", first.id), false);
      await a.deployments.markDeleted(t, [user.deployment.id], false, tick());
      assert.equal(await a.listeners.delete(t, first.id), true);
      assert.equal(await a.listeners.delete(t, first.id), false);
      assert.equal(await a.listeners.get(t, first.id), undefined);
      // The deleted deployment let go of it.
      assert.equal((await b.deployments.getAny(user.deployment.id))?.listener_id, null);
    });

    it("keeps one default listener per workspace, also under concurrent changes from two pools", async () => {
      const t = await newTenant(a);
      const other = await newTenant(a);
      const listeners = Array.from({ length: 6 }, (_, i) => newListener(t, `c-${i}`));
      await Promise.all(listeners.map((l) => a.listeners.create(l)));
      await a.listeners.create(newListener(other, "c-0", randomUUID(), true));
      assert.equal(await a.listeners.defaultOf(t), undefined);
      const change = () => ({ compute_config: { cluster_namespaces: null }, version: null, default: true, updated_at: tick() });
      const updated = await Promise.all(listeners.map((l, i) => (i % 2 ? b : a).listeners.update(t, l.id, change())));
      assert.ok(updated.every((l) => l?.default === true)); // each was the default, for a moment
      const defaults = async (tenantId: string) =>
        (await a.listeners.list(tenantId, 100, 0)).filter((l) => l.default).map((l) => l.id);
      const [only] = await defaults(t);
      assert.deepEqual(await defaults(t), [only]);
      assert.equal((await b.listeners.defaultOf(t))?.id, only);
      // New defaults created concurrently: again one.
      const fresh = Array.from({ length: 4 }, (_, i) => newListener(t, `n-${i}`, randomUUID(), true));
      await Promise.all(fresh.map((l, i) => (i % 2 ? b : a).listeners.create(l)));
      const [newest] = await defaults(t);
      assert.deepEqual(await defaults(t), [newest]);
      assert.ok(fresh.some((l) => l.id === newest));
      // The other workspace's default never moved.
      assert.equal((await defaults(other)).length, 1);
      // Unmarking leaves none.
      await a.listeners.update(t, newest, {
        compute_config: { cluster_namespaces: null },
        version: null,
        default: false,
        updated_at: tick(),
      });
      assert.equal(await a.listeners.defaultOf(t), undefined);
    });
  });
}
