// Authorization scopes on each backend: a resource whose metadata does not
// contain the scope is not found by any operation given that scope, and is
// left as it was; search and count see only the resources in scope.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import type { NewCron } from "../../../src/storage/cron-types.js";
import type { MetadataScope, NewAssistant, Storage } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";

const ALICE = { owner: "alice" };
const BOB = { owner: "bob", tags: ["x", "y"] };
/** Scopes and who each lets in: containment, so `{tags: ["x"]}` matches Bob's array. */
const SCOPES: [MetadataScope, ("alice" | "bob")[]][] = [
  [ALICE, ["alice"]],
  [{ owner: "bob" }, ["bob"]],
  [{ tags: ["x"] }, ["bob"]],
  [{ tags: ["y", "x"] }, ["bob"]],
  [{ tags: ["z"] }, []],
  [{ owner: "carol" }, []],
  [{}, ["alice", "bob"]],
];

const page = { limit: 10, offset: 0, sort_by: "created_at", sort_order: "asc" } as const;

function newAssistant(metadata: MetadataScope): NewAssistant {
  return { assistant_id: randomUUID(), graph_id: "g", name: "a", description: null, config: {}, context: {}, metadata };
}

function newCron(assistantId: string, metadata: MetadataScope): NewCron {
  return {
    cron_id: randomUUID(),
    assistant_id: assistantId,
    thread_id: null,
    on_run_completed: "delete",
    end_time: null,
    schedule: "0 * * * *",
    timezone: null,
    payload: {},
    user_id: null,
    next_run_date: null,
    metadata,
    enabled: true,
  };
}

/** Alice's and Bob's thread ids. */
async function twoThreads(storage: Storage): Promise<{ alice: string; bob: string }> {
  const [alice, bob] = [randomUUID(), randomUUID()];
  assert.ok(await storage.threads.create({ thread_id: alice, metadata: ALICE }));
  assert.ok(await storage.threads.create({ thread_id: bob, metadata: BOB }));
  return { alice, bob };
}

export function scopesContract(backend: Backend): void {
  describe("authorization scopes", () => {
    const test = databasePerTest(backend);

    it("threads: get, patch, delete, copy and prune leave a thread outside the scope alone", async () => {
      const { storage } = test;
      const { alice, bob } = await twoThreads(storage);

      assert.equal(await storage.threads.get(bob, ALICE), undefined);
      assert.deepEqual((await storage.threads.get(alice, ALICE))?.metadata, ALICE);
      assert.deepEqual((await storage.threads.get(bob, { tags: ["x"] }))?.metadata, BOB);
      assert.deepEqual((await storage.threads.get(bob, {}))?.metadata, BOB, "an empty scope restricts nothing");

      const before = await storage.threads.get(bob);
      assert.equal(await storage.threads.patch(bob, { owner: "alice" }, 5, ALICE), undefined);
      assert.deepEqual(await storage.threads.get(bob), before);
      assert.deepEqual((await storage.threads.patch(alice, { n: 1 }, undefined, ALICE))?.metadata, { ...ALICE, n: 1 });

      assert.equal(await storage.threads.delete(bob, ALICE), false);
      assert.ok(await storage.threads.get(bob));

      const target = randomUUID();
      assert.equal(await storage.threads.copy(bob, target, ALICE), undefined);
      assert.equal(await storage.threads.get(target), undefined, "nothing copied");
      assert.deepEqual((await storage.threads.copy(bob, target, { tags: ["y"] }))?.metadata, BOB);
      const stamped = { ...BOB, owner: "carol" };
      const restamped = await storage.threads.copy(bob, randomUUID(), { tags: ["y"] }, stamped);
      assert.deepEqual(restamped?.metadata, stamped, "a copy takes the metadata it is given");
      assert.ok(restamped && (await storage.threads.delete(restamped.thread_id)));

      assert.equal(await storage.threads.prune([alice, bob], "keep_latest", { owner: "bob" }), 1);
      assert.equal(await storage.threads.prune([alice, bob, target], "delete", ALICE), 1, "only Alice's is counted");
      assert.equal(await storage.threads.get(alice), undefined);
      assert.ok(await storage.threads.get(bob));
      assert.ok(await storage.threads.get(target));

      assert.equal(await storage.threads.delete(bob, { owner: "bob" }), true);
    });

    it("threads: search and count see only the threads in scope, with every other filter", async () => {
      const { storage } = test;
      const ids = await twoThreads(storage);
      for (const [scope, who] of SCOPES) {
        const found = await storage.threads.search({ ...page, scope });
        assert.deepEqual(
          found.items.map((thread) => thread.thread_id),
          who.map((name) => ids[name]),
          JSON.stringify(scope),
        );
        assert.equal(found.total, who.length);
        assert.equal(await storage.threads.count({ scope }), who.length, JSON.stringify(scope));
      }
      // The scope and the caller's own filters are separate conditions, all of which hold.
      assert.equal(await storage.threads.count({ scope: ALICE, metadata: { owner: "bob" } }), 0);
      assert.equal(await storage.threads.count({ scope: ALICE, metadata: ALICE }), 1);
      assert.equal(await storage.threads.count({ scope: ALICE, ids: [ids.bob] }), 0);
      assert.equal((await storage.threads.search({ ...page, scope: { tags: ["x"] }, status: "busy" })).total, 0);
    });

    it("assistants: get, patch, setLatest and delete leave an assistant outside the scope alone", async () => {
      const { storage } = test;
      const alice = newAssistant(ALICE);
      const bob = newAssistant(BOB);
      assert.ok(await storage.assistants.create(alice));
      assert.ok(await storage.assistants.create(bob));

      assert.equal(await storage.assistants.get(bob.assistant_id, ALICE), undefined);
      assert.equal((await storage.assistants.get(alice.assistant_id, ALICE))?.assistant_id, alice.assistant_id);
      assert.equal((await storage.assistants.get(bob.assistant_id, { tags: ["x"] }))?.assistant_id, bob.assistant_id);
      assert.equal((await storage.assistants.get(bob.assistant_id, {}))?.assistant_id, bob.assistant_id);

      assert.equal(await storage.assistants.patch(bob.assistant_id, { name: "stolen" }, ALICE), undefined);
      const untouched = await storage.assistants.get(bob.assistant_id);
      assert.deepEqual([untouched?.name, untouched?.version], ["a", 1]);
      const versions = await storage.assistants.versions(bob.assistant_id, { limit: 10, offset: 0 });
      assert.equal(versions.length, 1, "no version added");

      const patched = await storage.assistants.patch(bob.assistant_id, { name: "b" }, { owner: "bob" });
      assert.deepEqual([patched?.name, patched?.version], ["b", 2]);
      assert.equal(await storage.assistants.setLatest(bob.assistant_id, 1, ALICE), undefined);
      assert.equal((await storage.assistants.get(bob.assistant_id))?.version, 2);
      assert.equal((await storage.assistants.setLatest(bob.assistant_id, 1, { tags: ["y"] }))?.version, 1);

      assert.equal(await storage.assistants.delete(bob.assistant_id, ALICE), false);
      assert.ok(await storage.assistants.get(bob.assistant_id));
      assert.equal(await storage.assistants.delete(bob.assistant_id, { owner: "bob" }), true);
      assert.equal(await storage.assistants.get(bob.assistant_id), undefined);
    });

    it("assistants: search and count see only the assistants in scope, with every other filter", async () => {
      const { storage } = test;
      const alice = newAssistant(ALICE);
      const bob = { ...newAssistant(BOB), graph_id: "h" };
      assert.ok(await storage.assistants.create(alice));
      assert.ok(await storage.assistants.create(bob));
      const ids = { alice: alice.assistant_id, bob: bob.assistant_id };
      for (const [scope, who] of SCOPES) {
        const found = await storage.assistants.search({ ...page, scope });
        assert.deepEqual(
          found.items.map((assistant) => assistant.assistant_id),
          who.map((name) => ids[name]),
          JSON.stringify(scope),
        );
        assert.equal(found.total, who.length);
        assert.equal(await storage.assistants.count({ scope }), who.length, JSON.stringify(scope));
      }
      assert.equal(await storage.assistants.count({ scope: ALICE, metadata: { owner: "bob" } }), 0);
      assert.equal(await storage.assistants.count({ scope: ALICE, graph_id: "h" }), 0);
      assert.equal(await storage.assistants.count({ scope: { tags: ["x"] }, graph_id: "h" }), 1);
    });

    it("crons: get, update and delete leave a cron outside the scope alone", async () => {
      const { storage } = test;
      const assistant = newAssistant({});
      assert.ok(await storage.assistants.create(assistant));
      const alice = newCron(assistant.assistant_id, ALICE);
      const bob = newCron(assistant.assistant_id, BOB);
      assert.ok(await storage.crons.create(alice));
      assert.ok(await storage.crons.create(bob));

      assert.equal(await storage.crons.get(bob.cron_id, ALICE), undefined);
      assert.equal((await storage.crons.get(alice.cron_id, ALICE))?.cron_id, alice.cron_id);
      assert.equal((await storage.crons.get(bob.cron_id, { tags: ["x"] }))?.cron_id, bob.cron_id);
      assert.equal((await storage.crons.get(bob.cron_id, {}))?.cron_id, bob.cron_id);

      const update = { ...bob, schedule: "*/5 * * * *", metadata: ALICE, enabled: false };
      assert.equal(await storage.crons.update(bob.cron_id, update, ALICE), undefined);
      const untouched = await storage.crons.get(bob.cron_id);
      assert.deepEqual([untouched?.schedule, untouched?.metadata, untouched?.enabled], [bob.schedule, BOB, true]);
      const updated = await storage.crons.update(bob.cron_id, { ...update, metadata: BOB }, { owner: "bob" });
      assert.deepEqual([updated?.schedule, updated?.enabled], [update.schedule, false]);

      assert.equal(await storage.crons.delete(bob.cron_id, ALICE), false);
      assert.ok(await storage.crons.get(bob.cron_id));
      assert.equal(await storage.crons.delete(bob.cron_id, { tags: ["y"] }), true);
      assert.equal(await storage.crons.get(bob.cron_id), undefined);
    });

    it("crons: search and count see only the crons in scope, with every other filter", async () => {
      const { storage } = test;
      const assistant = newAssistant({});
      assert.ok(await storage.assistants.create(assistant));
      const alice = newCron(assistant.assistant_id, ALICE);
      const bob = { ...newCron(assistant.assistant_id, BOB), enabled: false };
      assert.ok(await storage.crons.create(alice));
      assert.ok(await storage.crons.create(bob));
      const ids = { alice: alice.cron_id, bob: bob.cron_id };
      for (const [scope, who] of SCOPES) {
        const found = await storage.crons.search({ ...page, scope });
        assert.deepEqual(
          found.items.map((cron) => cron.cron_id),
          who.map((name) => ids[name]),
          JSON.stringify(scope),
        );
        assert.equal(found.total, who.length);
        assert.equal(await storage.crons.count({ scope }), who.length, JSON.stringify(scope));
      }
      assert.equal(await storage.crons.count({ scope: ALICE, metadata: { owner: "bob" } }), 0);
      assert.equal(await storage.crons.count({ scope: ALICE, enabled: false }), 0);
      assert.equal(await storage.crons.count({ scope: { tags: ["x"] }, enabled: false }), 1);
    });

    it("a string in the scope matches only that string: not a list holding it, a number, or JSON that spells it", async () => {
      const { storage } = test;
      const lookalikes: MetadataScope[] = [{ owner: ["alice"] }, { owner: { a: 1 } }, { n: 1 }, { "odd.key": "v" }];
      const ids = [];
      for (const metadata of lookalikes) {
        const id = randomUUID();
        assert.ok(await storage.threads.create({ thread_id: id, metadata }));
        ids.push(id);
      }
      assert.equal(await storage.threads.get(ids[0]!, { owner: "alice" }), undefined);
      assert.equal(await storage.threads.get(ids[1]!, { owner: '{"a":1}' }), undefined);
      assert.equal(await storage.threads.get(ids[2]!, { n: "1" }), undefined);
      assert.ok(await storage.threads.get(ids[2]!, { n: 1 }), "a number matches the number");
      assert.ok(await storage.threads.get(ids[3]!, { "odd.key": "v" }), "a key with a dot is one key");
      assert.equal(await storage.threads.count({ scope: { owner: "alice" } }), 0);
    });
  });
}
