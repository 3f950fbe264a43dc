// The long-term memory store (src/storage/memory-store-types.ts): every method of
// StoreRepository and the rules its comments state, on each backend; and with
// PostgreSQL, the same script of calls must give what SQLite gives.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import pg from "pg";
import { createPostgresStorage } from "../../../src/storage/postgres/index.js";
import { createSqliteStorage } from "../../../src/storage/sqlite/index.js";
import type { StoreSearchHit, StoreSearchQuery, StoreVector } from "../../../src/storage/memory-store-types.js";
import type { JsonObject, Storage } from "../../../src/storage/types.js";
import { type Backend, databasePerTest, type TestStorage } from "./backends.js";
import { clockPast, ISO, sleep } from "./fixtures.js";
import { freshSchema } from "./postgres-schema.js";

interface PutOptions {
  ttl?: number | null;
  vectors?: StoreVector[];
}

const put = (storage: Storage, namespace: string[], key: string, value: JsonObject, options: PutOptions = {}) =>
  storage.store.put({ namespace, key, value, ttlMinutes: options.ttl ?? null, vectors: options.vectors ?? [] });

const search = (storage: Storage, query: Partial<StoreSearchQuery> = {}) =>
  storage.store.search({ namespacePrefix: [], limit: 100, offset: 0, refreshTtl: false, ...query });

const namespaces = (storage: Storage, query: { prefix?: string[]; suffix?: string[]; maxDepth?: number } = {}) =>
  storage.store.listNamespaces({ limit: 100, offset: 0, ...query });

/** Hits as "namespace/key", in order. */
const names = (hits: StoreSearchHit[]) => hits.map((hit) => `${hit.namespace.join(".")}/${hit.key}`);

const text = (field: string, vector: number[]): StoreVector => ({ field, vector });

/** The unit vector along one axis. */
const axis = (dimensions: number, index: number) => Array.from({ length: dimensions }, (_, d) => (d === index ? 1 : 0));

/**
 * Resolves once the items put with a ttl of 0.001 (60 ms) before the call have expired: both backends compare expiries
 * with this process's clock, and each put returned before. Not read from the item: on a busy machine it may be gone by then.
 */
async function pastShortTtl(): Promise<void> {
  await clockPast(Date.now() + 60);
}

/** Rows of a store table, counted in the database itself: what the API cannot show (vectors left behind). */
async function countRows(db: TestStorage, table: "store_items" | "store_vectors"): Promise<number> {
  if (db.url) {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      return Number((await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    } finally {
      await client.end();
    }
  }
  const sqlite = new Database(db.file ?? "", { readonly: true });
  try {
    return (sqlite.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    sqlite.close();
  }
}

/** Numbers in [-1, 1), the same ones every run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * 2 - 1;
  };
}

function assertClose(actual: number | null, expected: number, what: string): void {
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-6, `${what}: ${actual} is not ${expected}`);
}

/** After concurrent puts of ["race"]/"one": one writer's value, and that writer's two vectors only. */
async function assertOneWriterWon(db: TestStorage, dimensions: number): Promise<void> {
  const item = await db.storage.store.get(["race"], "one", false);
  const writer = item?.value.writer;
  assert.equal(typeof writer, "number");
  assert.equal(await countRows(db, "store_items"), 1);
  assert.equal(await countRows(db, "store_vectors"), 2, "the last put's vectors, and no other's");
  for (let d = 0; d < dimensions; d++) {
    const [hit] = await search(db.storage, { vector: axis(dimensions, d) });
    assert.equal(hit?.score, d === writer ? 1 : 0, `score along axis ${d} (writer ${writer})`);
  }
}

/** Runs store-writer.mjs in a thread of its own: `writer` puts ["race"]/"one" `puts` times, with vectors along axis `writer`. */
function runWriter(data: { dataDir: string; writer: number; puts: number; dimensions: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./store-writer.mjs", import.meta.url), { workerData: data });
    let failure: string | undefined;
    worker.on("message", (message: { ok: boolean; error?: string }) => {
      if (!message.ok) failure = message.error;
    });
    worker.once("error", reject);
    worker.once("exit", (code) =>
      failure || code !== 0 ? reject(new Error(failure ?? `the writer exited with ${code}`)) : resolve(),
    );
  });
}

export function storeContract(backend: Backend): void {
  describe("store", () => {
    const db = databasePerTest(backend);

    it("puts, gets, replaces and deletes items, keeping created_at on replace", async () => {
      const { storage } = db;
      const { store } = storage;
      assert.equal(await store.get(["users", "u1"], "prefs", false), undefined);
      await put(storage, ["users", "u1"], "prefs", { theme: "dark", nested: { list: [1, "two", null, true] } });
      const first = await store.get(["users", "u1"], "prefs", false);
      assert.ok(first);
      assert.deepEqual(first, {
        namespace: ["users", "u1"],
        key: "prefs",
        value: { theme: "dark", nested: { list: [1, "two", null, true] } },
        created_at: first.created_at,
        updated_at: first.created_at,
        expires_at: null,
        ttl_minutes: null,
      });
      assert.match(first.created_at, ISO);
      assert.deepEqual(Object.keys(first), [
        "namespace",
        "key",
        "value",
        "created_at",
        "updated_at",
        "expires_at",
        "ttl_minutes",
      ]);

      await sleep(5);
      await put(storage, ["users", "u1"], "prefs", { theme: "light" });
      const second = await store.get(["users", "u1"], "prefs", false);
      assert.deepEqual(second?.value, { theme: "light" }, "a put replaces the whole value");
      assert.equal(second?.created_at, first.created_at);
      assert.ok((second?.updated_at ?? "") > first.updated_at);

      // Items differ by namespace and key: a namespace's parent and child, a key that looks like a path.
      await put(storage, ["users"], "u1", { parent: true });
      await put(storage, ["users", "u1", "prefs"], "x", { child: true });
      await put(storage, ["users"], "u1.prefs", { dotted: true });
      assert.deepEqual((await store.get(["users"], "u1", false))?.value, { parent: true });
      assert.deepEqual((await store.get(["users"], "u1.prefs", false))?.value, { dotted: true });
      assert.deepEqual((await store.get(["users", "u1", "prefs"], "x", false))?.value, { child: true });
      // Labels and keys of any characters but "." in labels.
      const odd = ["ü ñ", "%_*", "\u{1F600}"];
      await put(storage, odd, "k/e'y\"", { odd: true });
      assert.deepEqual((await store.get(odd, "k/e'y\"", false))?.namespace, odd);
      assert.equal((await search(storage)).length, 5);

      await store.delete(["users", "u1"], "prefs");
      assert.equal(await store.get(["users", "u1"], "prefs", false), undefined);
      await store.delete(["users", "u1"], "prefs"); // absent: no error
      await store.delete(["nowhere"], "nothing");
      assert.equal((await search(storage)).length, 4);

      await assert.rejects(put(storage, ["a.b"], "k", {}), /namespace label/);
      await assert.rejects(put(storage, ["a", ""], "k", {}), /namespace label/);
      await assert.rejects(put(storage, [], "k", {}), /at least one label/);
    });

    it("hides expired items from every read before a sweep, and refreshes ttls when asked", async () => {
      const { storage } = db;
      const { store } = storage;
      const before = Date.now();
      await put(storage, ["t"], "long", { v: 1 }, { ttl: 1 });
      const after = Date.now();
      const long = await store.get(["t"], "long", false);
      assert.equal(long?.ttl_minutes, 1);
      const expires = Date.parse(long?.expires_at ?? "");
      assert.ok(expires >= before + 60_000 && expires <= after + 60_000, `${long?.expires_at} is a minute after the put`);
      assert.equal(expires - Date.parse(long?.updated_at ?? ""), 60_000);

      // A ttl may be a fraction of a minute: 0.5 is 30 s (long enough to be read however busy the machine).
      await put(storage, ["t"], "half", { v: 0 }, { ttl: 0.5 });
      const half = await store.get(["t"], "half", false);
      assert.equal(half?.ttl_minutes, 0.5);
      assert.equal(Date.parse(half?.expires_at ?? "") - Date.parse(half?.updated_at ?? ""), 30_000);
      await store.delete(["t"], "half");
      // 0.001 is 60 ms: expired once 60 ms have passed since the put returned (it was updated before).
      await put(storage, ["gone"], "short", { v: 2 }, { ttl: 0.001, vectors: [text("v", [1, 0])] });
      const shortPut = Date.now();
      await pastShortTtl();
      assert.equal(await store.get(["gone"], "short", false), undefined);
      assert.equal(await store.get(["gone"], "short", true), undefined, "a refresh does not bring it back");
      assert.deepEqual(names(await search(storage)), ["t/long"]);
      assert.deepEqual(await search(storage, { vector: [1, 0] }), []);
      assert.deepEqual(await namespaces(storage), [["t"]]);
      assert.equal((await store.size()).items, 1);
      assert.equal(await countRows(db, "store_items"), 2, "stored until swept");

      // A refresh pushes the expiry to now + ttl; a plain read leaves it, and a refresh is no update.
      await sleep(5);
      assert.equal((await store.get(["t"], "long", false))?.expires_at, long?.expires_at);
      const refreshing = Date.now();
      const refreshed = await store.get(["t"], "long", true);
      const pushed = Date.parse(refreshed?.expires_at ?? "");
      assert.ok(pushed > expires && pushed >= refreshing + 60_000 && pushed <= Date.now() + 60_000);
      assert.equal(refreshed?.updated_at, long?.updated_at);
      assert.equal((await store.get(["t"], "long", false))?.expires_at, refreshed?.expires_at, "the refresh is stored");
      // Without a ttl there is nothing to refresh.
      await put(storage, ["t"], "forever", { v: 3 });
      assert.equal((await store.get(["t"], "forever", true))?.expires_at, null);
      // A put without a ttl makes a ttl'd item permanent.
      await put(storage, ["t"], "long", { v: 1 });
      assert.deepEqual(
        [(await store.get(["t"], "long", true))?.expires_at, (await store.get(["t"], "long", false))?.ttl_minutes],
        [null, null],
      );

      // Replacing an expired item that is not swept yet makes a new item.
      await put(storage, ["gone"], "short", { v: 4 });
      const reborn = await store.get(["gone"], "short", false);
      assert.deepEqual(reborn?.value, { v: 4 });
      assert.equal(reborn?.created_at, reborn?.updated_at);
      assert.ok(Date.parse(reborn?.created_at ?? "") > shortPut, "created by the new put, not kept from the expired item");
    });

    it("refreshes the ttls of the items a search returns, and only those", async () => {
      const { storage } = db;
      const { store } = storage;
      await put(storage, ["r"], "a", { n: 1 }, { ttl: 1, vectors: [text("t", [1, 0])] });
      await sleep(2);
      await put(storage, ["r"], "b", { n: 2 }, { ttl: 1 });
      await sleep(2);
      await put(storage, ["r"], "c", { n: 3 });
      const expiry = async (key: string) => (await store.get(["r"], key, false))?.expires_at;
      const [a, b] = [await expiry("a"), await expiry("b")];
      await sleep(5);
      assert.deepEqual(
        await search(storage, { limit: 2 }),
        await search(storage, { limit: 2 }),
        "a plain search changes nothing",
      );
      assert.equal(await expiry("b"), b);
      const hits = await search(storage, { limit: 2, refreshTtl: true });
      assert.deepEqual(names(hits), ["r/c", "r/b"]);
      assert.equal(hits[0].expires_at, null);
      assert.ok((hits[1].expires_at ?? "") > (b ?? ""));
      assert.equal(await expiry("b"), hits[1].expires_at, "the hit shows the stored expiry");
      assert.equal(await expiry("a"), a, "beyond the page: not refreshed");
      const [byVector] = await search(storage, { vector: [1, 0], refreshTtl: true });
      assert.equal(byVector.key, "a");
      assert.ok((byVector.expires_at ?? "") > (a ?? ""));
      assert.equal(await expiry("a"), byVector.expires_at);
    });

    it("searches newest updated first under a namespace prefix, with limit and offset", async () => {
      const { storage } = db;
      const spaces = [["docs"], ["docs", "a"], ["docs", "a", "deep"], ["docs-old"], ["docsx"], ["other"]];
      for (const [i, namespace] of spaces.entries()) {
        await put(storage, namespace, `k${i}`, { i });
        await sleep(2);
      }
      assert.deepEqual(names(await search(storage)), [
        "other/k5",
        "docsx/k4",
        "docs-old/k3",
        "docs.a.deep/k2",
        "docs.a/k1",
        "docs/k0",
      ]);
      assert.deepEqual(names(await search(storage, { namespacePrefix: ["docs"] })), ["docs.a.deep/k2", "docs.a/k1", "docs/k0"]);
      assert.deepEqual(names(await search(storage, { namespacePrefix: ["docs", "a"] })), ["docs.a.deep/k2", "docs.a/k1"]);
      assert.deepEqual(await search(storage, { namespacePrefix: ["doc"] }), [], "a prefix is whole labels");
      assert.ok((await search(storage)).every((hit) => hit.score === null));

      // An update brings an item to the front.
      await put(storage, ["docs"], "k0", { i: 0, again: true });
      assert.deepEqual(names(await search(storage, { namespacePrefix: ["docs"], limit: 1 })), ["docs/k0"]);

      const all = names(await search(storage));
      const paged: string[] = [];
      for (let offset = 0; offset < 8; offset += 4) paged.push(...names(await search(storage, { limit: 4, offset })));
      assert.deepEqual(paged, all);
      assert.deepEqual(names(await search(storage, { limit: 2, offset: 1 })), all.slice(1, 3));
      assert.deepEqual(await search(storage, { limit: 0 }), []);
    });

    it("filters on top-level fields: JSON equality, and $eq $ne $gt $gte $lt $lte", async () => {
      const { storage } = db;
      const values: Record<string, JsonObject> = {
        a: { kind: "note", n: 1, tags: ["x", "y"], meta: { a: 1, b: 2 }, flag: true, s: "apple" },
        b: { kind: "note", n: 5, tags: ["y", "x"], meta: { b: 2, a: 1 }, flag: false, s: "Banana" },
        c: { kind: "task", n: 10, s: "cherry", nested: { deep: 1 } },
        d: { kind: "task", n: "7", none: null },
        e: { n: 2.5, s: "\u{1F600}" },
        f: { other: 1, s: "\uFFFD" },
      };
      for (const [key, value] of Object.entries(values)) {
        await put(storage, ["f"], key, value);
        await sleep(2); // apart in time: newest first is their order
      }
      const found = async (filter: JsonObject) =>
        names(await search(storage, { filter }))
          .map((name) => name.slice(2))
          .sort();

      assert.deepEqual(await found({}), ["a", "b", "c", "d", "e", "f"]);
      assert.deepEqual(await found({ kind: "note" }), ["a", "b"]);
      assert.deepEqual(await found({ meta: { a: 1, b: 2 } }), ["a", "b"], "objects equal whatever their key order");
      assert.deepEqual(await found({ meta: { a: 1 } }), [], "equality, not containment");
      assert.deepEqual(await found({ tags: ["x", "y"] }), ["a"], "arrays equal element by element");
      assert.deepEqual(await found({ n: 5 }), ["b"]);
      assert.deepEqual(await found({ n: { $eq: 5 } }), ["b"]);
      assert.deepEqual(await found({ n: "7" }), ["d"]);
      assert.deepEqual(await found({ none: null }), ["d"]);
      assert.deepEqual(await found({ missing: null }), [], "a missing field equals nothing");
      assert.deepEqual(await found({ n: { $ne: 5 } }), ["a", "c", "d", "e", "f"], "$ne holds for a missing field");
      assert.deepEqual(await found({ kind: { $ne: "note" } }), ["c", "d", "e", "f"]);
      assert.deepEqual(await found({ n: { $gt: 2 } }), ["b", "c", "e"], "numbers compare with numbers only");
      assert.deepEqual(await found({ n: { $gte: 5, $lt: 10 } }), ["b"]);
      assert.deepEqual(await found({ n: { $lte: 1 } }), ["a"]);
      assert.deepEqual(await found({ n: { $gte: 2.5, $lte: 2.5 } }), ["e"]);
      assert.deepEqual(await found({ n: { $gt: "5" } }), ["d"], "strings compare with strings only");
      assert.deepEqual(
        await found({ s: { $gt: "apple" } }),
        ["c", "e", "f"],
        "by code point: capitals first, U+FFFD before U+1F600",
      );
      assert.deepEqual(await found({ s: { $gt: "\uFFFD" } }), ["e"]);
      assert.deepEqual(await found({ s: { $lt: "a" } }), ["b"]);
      assert.deepEqual(await found({ flag: { $lt: true } }), ["b"], "false before true");
      assert.deepEqual(await found({ nested: { $gt: {} } }), [], "objects have no order");
      assert.deepEqual(await found({ kind: "note", n: { $gt: 1 } }), ["b"], "conditions all hold");
      assert.deepEqual(names(await search(storage, { filter: { kind: "task" }, limit: 1 })), ["f/d"], "then newest first, paged");
      await assert.rejects(search(storage, { filter: { n: { $in: [1, 5] } } }), /Unsupported store filter operator \$in/);
    });

    it("ranks by cosine similarity, an item by its best vector, leaving out items without one", async () => {
      const { storage } = db;
      await put(storage, ["m"], "k1", { kind: "x" }, { vectors: [text("t", [1, 0, 0])] });
      await put(storage, ["m"], "k2", { kind: "y" }, { vectors: [text("t", [0, 1, 0])] });
      // Two vectors of one field (a list's texts): the best one counts.
      await put(storage, ["m"], "k3", { kind: "x" }, { vectors: [text("t", [0, 0, 1]), text("t", [0.9, 0.1, 0])] });
      await put(storage, ["m"], "k4", { kind: "x" });
      await put(storage, ["m", "sub"], "k5", { kind: "y" }, { vectors: [text("t", [-1, 0, 0])] });
      await put(storage, ["m"], "k6", { kind: "x" }, { vectors: [text("t", [1, 0])] });
      await put(storage, ["m"], "k7", { kind: "x" }, { vectors: [text("t", [0, 0, 0])] });
      await put(storage, ["other"], "k8", { kind: "x" }, { vectors: [text("u", [1, 0, 0])] });

      const hits = await search(storage, { namespacePrefix: ["m"], vector: [2, 0, 0] });
      assert.deepEqual(names(hits), ["m/k1", "m/k3", "m/k2", "m/k7", "m.sub/k5"], "ties by namespace and key");
      const expected = [1, 0.9 / Math.hypot(0.9, 0.1), 0, 0, -1];
      for (const [i, hit] of hits.entries()) assertClose(hit.score, expected[i], hit.key);
      assert.deepEqual(hits[0].value, { kind: "x" });

      assert.deepEqual(names(await search(storage, { namespacePrefix: ["m"], vector: [1, 0, 0], limit: 2, offset: 1 })), [
        "m/k3",
        "m/k2",
      ]);
      assert.deepEqual(names(await search(storage, { namespacePrefix: ["m"], vector: [1, 0, 0], filter: { kind: "x" } })), [
        "m/k1",
        "m/k3",
        "m/k7",
      ]);
      assert.deepEqual(names(await search(storage, { vector: [1, 0, 0], limit: 2 })), ["m/k1", "other/k8"]);
      // Vectors of another dimension are compared only with queries of theirs.
      const [flat] = await search(storage, { vector: [0, 3] });
      assert.deepEqual([flat.key, flat.score], ["k6", 0]);
      assert.equal((await search(storage, { vector: [0, 3] })).length, 1);

      // A put replaces the vectors; without vectors, the item is out of the ranking but still found otherwise.
      await put(storage, ["m"], "k1", { kind: "x" }, { vectors: [text("t", [0, 1, 0])] });
      assert.equal((await search(storage, { namespacePrefix: ["m"], vector: [1, 0, 0] }))[0].key, "k3");
      assert.deepEqual(names(await search(storage, { namespacePrefix: ["m"], vector: [0, 1, 0], limit: 2 })), ["m/k1", "m/k2"]);
      await put(storage, ["m"], "k1", { kind: "x" });
      assert.ok(!names(await search(storage, { vector: [0, 1, 0] })).includes("m/k1"));
      assert.ok(names(await search(storage)).includes("m/k1"));

      // Vectors go with their item; an expired item leaves the ranking at once.
      const vectors = await countRows(db, "store_vectors");
      await storage.store.delete(["m"], "k3");
      assert.equal(await countRows(db, "store_vectors"), vectors - 2);
      await put(storage, ["m"], "k9", {}, { ttl: 0.001, vectors: [text("t", [1, 0, 0])] });
      await pastShortTtl();
      assert.ok(!names(await search(storage, { vector: [1, 0, 0] })).includes("m/k9"));
    });

    it("lists the distinct namespaces of live items, sorted, by prefix, suffix and depth, paged", async () => {
      const { storage } = db;
      const spaces = [
        ["a"],
        ["a", "b"],
        ["a", "b", "c"],
        ["a", "c"],
        ["a-b"],
        ["b", "x", "c"],
        ["users", "u2", "prefs"],
        ["users", "u1", "prefs"],
        ["users", "u2", "notes"],
      ];
      for (const namespace of spaces) {
        await put(storage, namespace, "k1", {});
        await put(storage, namespace, "k2", {});
      }
      await put(storage, ["gone"], "k", {}, { ttl: 0.001 });
      await pastShortTtl();

      const all = [
        ["a"],
        ["a", "b"],
        ["a", "b", "c"],
        ["a", "c"],
        ["a-b"],
        ["b", "x", "c"],
        ["users", "u1", "prefs"],
        ["users", "u2", "notes"],
        ["users", "u2", "prefs"],
      ];
      assert.deepEqual(await namespaces(storage), all, "label by label, a namespace before those it begins");
      assert.deepEqual(await namespaces(storage, { prefix: ["a"] }), all.slice(0, 4));
      assert.deepEqual(await namespaces(storage, { suffix: ["c"] }), [
        ["a", "b", "c"],
        ["a", "c"],
        ["b", "x", "c"],
      ]);
      assert.deepEqual(await namespaces(storage, { prefix: ["users"], suffix: ["prefs"] }), [
        ["users", "u1", "prefs"],
        ["users", "u2", "prefs"],
      ]);
      assert.deepEqual(await namespaces(storage, { prefix: ["users", "*", "prefs"] }), [
        ["users", "u1", "prefs"],
        ["users", "u2", "prefs"],
      ]);
      assert.deepEqual(await namespaces(storage, { suffix: ["*", "c"] }), [
        ["a", "b", "c"],
        ["a", "c"],
        ["b", "x", "c"],
      ]);
      assert.deepEqual(await namespaces(storage, { maxDepth: 1 }), [["a"], ["a-b"], ["b"], ["users"]]);
      assert.deepEqual(await namespaces(storage, { prefix: ["users"], maxDepth: 2 }), [
        ["users", "u1"],
        ["users", "u2"],
      ]);
      assert.deepEqual(await namespaces(storage, { prefix: ["users", "u2"], maxDepth: 5 }), [
        ["users", "u2", "notes"],
        ["users", "u2", "prefs"],
      ]);
      assert.deepEqual(await namespaces(storage, { prefix: ["a", "b", "c", "d"] }), []);
      assert.deepEqual(await storage.store.listNamespaces({ limit: 2, offset: 1 }), all.slice(1, 3));
      assert.deepEqual(await storage.store.listNamespaces({ maxDepth: 1, limit: 10, offset: 3 }), [["users"]]);
      await assert.rejects(namespaces(storage, { maxDepth: 0 }), RangeError);
    });

    it("sweeps expired items in bounded batches, with their vectors", async () => {
      const { storage } = db;
      await put(storage, ["s"], "kept", {}, { vectors: [text("t", [1, 1])] });
      await put(storage, ["s"], "later", {}, { ttl: 60 });
      assert.equal(await storage.store.sweepExpired(10), 0);
      for (let i = 0; i < 5; i++) await put(storage, ["s"], `old${i}`, { i }, { ttl: 0.001, vectors: [text("t", [1, i])] });
      await pastShortTtl();
      assert.equal(await countRows(db, "store_vectors"), 6);
      const sweeps = [];
      for (let i = 0; i < 4; i++) sweeps.push(await storage.store.sweepExpired(2));
      assert.deepEqual(sweeps, [2, 2, 1, 0]);
      assert.equal(await countRows(db, "store_items"), 2);
      assert.equal(await countRows(db, "store_vectors"), 1, "the swept items' vectors went with them");
      assert.deepEqual(names(await search(storage)).sort(), ["s/kept", "s/later"]);
    });

    it("sizes the live items: their count, and the bytes of their values and vectors", async () => {
      const { storage } = db;
      assert.deepEqual(await storage.store.size(), { items: 0, bytes: 0 });
      await put(storage, ["z"], "a", { text: "x".repeat(1000) });
      const one = await storage.store.size();
      assert.equal(one.items, 1);
      assert.ok(one.bytes >= 1000, `${one.bytes} bytes`);
      await put(storage, ["z"], "a", { text: "x".repeat(1000) }, { vectors: [text("t", axis(256, 0))] });
      const withVector = await storage.store.size();
      assert.equal(withVector.items, 1);
      assert.ok(withVector.bytes - one.bytes >= 1024, `a vector of 256 float32: ${withVector.bytes - one.bytes} bytes`);
      await put(storage, ["z"], "b", { text: "y".repeat(100) }, { ttl: 0.5 });
      assert.equal((await storage.store.size()).items, 2, "an item with a ttl counts until it expires");
      await storage.store.delete(["z"], "b");
      await put(storage, ["z"], "c", { text: "y".repeat(100) }, { ttl: 0.001 });
      await pastShortTtl();
      assert.deepEqual(await storage.store.size(), withVector, "an expired item does not count");
    });

    it("takes concurrent puts of one item from two storages: no failure, the last put's value and vectors", async () => {
      const other = await db.open();
      const dimensions = 20;
      await Promise.all(
        Array.from({ length: dimensions }, (_, writer) =>
          put(
            writer % 2 ? db.storage : other,
            ["race"],
            "one",
            { writer },
            {
              vectors: [text("a", axis(dimensions, writer)), text("b", axis(dimensions, writer))],
            },
          ),
        ),
      );
      await assertOneWriterWon(db, dimensions);
    });

    if (backend.name === "SQLite") {
      it("takes puts of one item from another thread's connection at the same time", async () => {
        const dimensions = 3;
        const dataDir = dirname(db.file ?? "");
        let writing = true;
        const writers = Promise.all([1, 2].map((writer) => runWriter({ dataDir, writer, puts: 300, dimensions }))).finally(
          () => (writing = false),
        );
        // This thread puts for as long as the others do.
        for (let i = 0; writing; i++) {
          await put(
            db.storage,
            ["race"],
            "one",
            { writer: 0, i },
            { vectors: [text("a", axis(dimensions, 0)), text("b", axis(dimensions, 0))] },
          );
          await new Promise((resolve) => setImmediate(resolve)); // lets the writers' exits be heard
        }
        await writers;
        await assertOneWriterWon(db, dimensions);
      });
    }

    it("is emptied by truncate's store part, and by no other", async () => {
      const { storage } = db;
      await put(storage, ["x"], "k", {}, { vectors: [text("t", [1])] });
      await storage.truncate({ runs: true, threads: true, assistants: true, checkpointer: true, store: false }, []);
      assert.equal((await storage.store.size()).items, 1);
      await storage.truncate({ runs: false, threads: false, assistants: false, checkpointer: false, store: true }, []);
      assert.deepEqual(await storage.store.size(), { items: 0, bytes: 0 });
      assert.equal(await countRows(db, "store_vectors"), 0);
    });

    it("searches 10,000 items by vector (timed and printed, not asserted)", async () => {
      const { storage } = db;
      const dimensions = 384;
      const random = seededRandom(42);
      const count = 10_000;
      const target = 7_777;
      const vectorOf = Array.from({ length: count }, () => Array.from({ length: dimensions }, random));
      let started = performance.now();
      for (let start = 0; start < count; start += 100) {
        await Promise.all(
          Array.from({ length: 100 }, (_, j) => {
            const i = start + j;
            return put(
              storage,
              ["bulk", `g${i % 10}`],
              `item-${i}`,
              { i, even: i % 2 === 0 },
              { vectors: [text("t", vectorOf[i])] },
            );
          }),
        );
      }
      const putMs = performance.now() - started;

      started = performance.now();
      const hits = await search(storage, { vector: vectorOf[target], limit: 10 });
      const searchMs = performance.now() - started;
      assert.equal(hits.length, 10);
      assert.equal(hits[0].key, `item-${target}`);
      assertClose(hits[0].score, 1, "the item's own vector");
      for (let i = 1; i < hits.length; i++) assert.ok((hits[i - 1].score ?? 0) >= (hits[i].score ?? 0));

      started = performance.now();
      const narrowed = await search(storage, {
        vector: vectorOf[target],
        namespacePrefix: ["bulk", `g${target % 10}`],
        filter: { even: false },
        limit: 10,
      });
      const narrowedMs = performance.now() - started;
      assert.equal(narrowed[0].key, `item-${target}`);
      assert.ok(narrowed.every((hit) => hit.value.even === false && hit.namespace[1] === `g${target % 10}`));

      started = performance.now();
      assert.equal((await search(storage, { limit: 10 })).length, 10);
      const newestMs = performance.now() - started;
      console.log(
        `[store on ${backend.name}] 10,000 items of ${dimensions} dimensions: put in ${putMs.toFixed(0)} ms;` +
          ` vector search ${searchMs.toFixed(0)} ms (${narrowedMs.toFixed(0)} ms under a prefix with a filter);` +
          ` newest-first search ${newestMs.toFixed(0)} ms`,
      );
    });
  });
}

/** Every result of one script of store calls, timestamps made "<time>" once checked and scores rounded. */
async function storeScript(storage: Storage): Promise<unknown[]> {
  const log: unknown[] = [];
  const { store } = storage;
  const labels = ["a", "A", "a-b", "z", "é", "\uFFFD", "\u{1F600}"];
  let n = 0;
  for (const label of labels) {
    for (const namespace of [[label], [label, "x"], ["top", label]]) {
      n++;
      // Apart in time, so newest-first orders are the same on both.
      await sleep(2);
      await put(
        storage,
        namespace,
        `k${n % 3}`,
        { n, label, even: n % 2 === 0, s: `${label}${n}` },
        {
          ttl: n % 4 === 0 ? 10 : null,
          vectors: [text("t", [n % 3, n % 5, 1]), text("t", [1, -(n % 2), 0])],
        },
      );
    }
  }
  log.push(await store.get(["top", "é"], "k0", false), await store.get(["top", "é"], "k0", true));
  log.push(await store.get(["nothing"], "k", true));
  log.push(await search(storage), await search(storage, { namespacePrefix: ["top"], limit: 5, offset: 2 }));
  for (const filter of [
    { even: true },
    { s: { $gt: "z" } },
    { s: { $lte: "a9" } },
    { n: { $gte: 3, $lt: 9 }, label: { $ne: "A" } },
    { label: "\u{1F600}" },
  ]) {
    log.push(await search(storage, { filter }));
  }
  log.push(await search(storage, { vector: [1, 0, 0], limit: 7 }), await search(storage, { vector: [0, 1, 1], offset: 3 }));
  log.push(await search(storage, { vector: [1, 1, 0], namespacePrefix: ["top"], filter: { even: false }, refreshTtl: true }));
  log.push(await namespaces(storage), await namespaces(storage, { prefix: ["top"], maxDepth: 2, suffix: ["*"] }));
  log.push(await namespaces(storage, { maxDepth: 1 }), await namespaces(storage, { suffix: ["x"] }));
  await store.delete(["top", "a"], "k0");
  log.push((await store.size()).items, await store.sweepExpired(100));
  return log.map(normalize);
}

function normalize(value: unknown): unknown {
  if (typeof value === "string" && /^\d{4}-\d\d-\d\dT/.test(value)) {
    assert.match(value, ISO);
    return "<time>";
  }
  if (typeof value === "number" && !Number.isInteger(value)) return Number(value.toFixed(6));
  if (Array.isArray(value)) return value.map(normalize);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, normalize(item)]));
  }
  return value;
}

/** PostgreSQL gives the results SQLite gives, for one script of store calls (orders of Unicode text included). */
export function storeParityWithSqlite(): void {
  it("gives the same store results as SQLite for the same calls", async () => {
    const dir = mkdtempSync(join(tmpdir(), "berth-store-parity-"));
    const sqlite = createSqliteStorage(dir, "normal");
    const schema = await freshSchema();
    const postgres = await createPostgresStorage(schema.url);
    try {
      assert.deepEqual(await storeScript(postgres), await storeScript(sqlite));
    } finally {
      await sqlite.close();
      await postgres.close();
      await schema.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
