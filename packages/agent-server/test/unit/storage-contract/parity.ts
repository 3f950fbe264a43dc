// The same script of repository calls against SQLite and PostgreSQL must give
// the same results (timestamps aside, which are checked for their format).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { emptyCheckpoint, type CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import { createPostgresStorage } from "../../../src/storage/postgres/index.js";
import { createSqliteStorage } from "../../../src/storage/sqlite/index.js";
import type { Storage } from "../../../src/storage/types.js";
import { ISO, newRun } from "./fixtures.js";
import { freshSchema } from "./postgres-schema.js";

const AT = Date.now() - 1_000;
/** Checkpoint metadata with the extra keys Berth adds (run_id, thread_id). */
const meta = (extra: Record<string, unknown>) => ({ source: "input", step: -1, parents: {}, ...extra }) as CheckpointMetadata;
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** Every result of the script, in order. */
async function script(storage: Storage): Promise<unknown[]> {
  const log: unknown[] = [];
  const { assistants: as, threads: ts, runs: rs } = storage;
  const cp = await storage.checkpointer();
  const base = { description: null, config: {}, context: {} };
  const [a0, a1, a2, a3] = ids("assistant", 4);
  log.push(await as.create({ ...base, assistant_id: a0, graph_id: "g1", name: "beta", metadata: { k: 0 } }));
  log.push(await as.create({ ...base, assistant_id: a1, graph_id: "g1", name: "Alpha", metadata: {} }));
  log.push(
    await as.create({ ...base, assistant_id: a2, graph_id: "g2", name: "alpha2", metadata: { tags: ["a", "b"], o: { p: 1 } } }),
  );
  log.push(await as.create({ ...base, assistant_id: a3, graph_id: "g2", name: "Émile", metadata: {} }));
  log.push(await as.create({ ...base, assistant_id: a0, graph_id: "g9", name: "dup", metadata: {} }));
  log.push(await as.patch(a0, { name: "Beta", metadata: { k: 1, m: "x" } }));
  log.push(await as.patch(a0, { description: "d", config: { c: 1 } }));
  log.push(await as.patch("missing", { name: "x" }));
  log.push(await as.versions(a0, { limit: 10, offset: 0 }));
  log.push(await as.versions(a0, { limit: 10, offset: 0, metadata: { m: "x" } }));
  log.push(await as.versions(a0, { limit: 1, offset: 1 }));
  log.push(await as.setLatest(a0, 1), await as.setLatest(a0, 99));
  for (const sort_by of ["name", "assistant_id", "graph_id", "created_at"] as const) {
    for (const sort_order of ["asc", "desc"] as const) {
      log.push(await as.search({ sort_by, sort_order, limit: 3, offset: 0 }));
    }
  }
  log.push(await as.search({ name: "ALPHA", sort_by: "name", sort_order: "asc", limit: 10, offset: 0 }));
  log.push(await as.search({ name: "émile", sort_by: "name", sort_order: "asc", limit: 10, offset: 0 }));
  log.push(await as.search({ metadata: { tags: ["b"], o: {} }, sort_by: "name", sort_order: "asc", limit: 10, offset: 0 }));
  log.push(await as.search({ graph_id: "g2", sort_by: "name", sort_order: "asc", limit: 10, offset: 5 }));
  log.push(await as.count({ graph_id: "g1" }), await as.count({ metadata: { k: 1 } }));
  log.push(await as.delete(a1), await as.delete(a1), await as.get(a1));

  const [t0, t1, t2, t3, t4, t5] = ids("thread", 6);
  log.push(await ts.create({ thread_id: t0, metadata: { owner: "u1", n: 1 } }));
  log.push(await ts.create({ thread_id: t1, metadata: { owner: "u2" }, config: { configurable: { x: 1 } } }));
  log.push(await ts.create({ thread_id: t2, metadata: {} }), await ts.create({ thread_id: t0, metadata: {} }));
  log.push(await ts.patch(t0, { n: 2, extra: [1] }), await ts.patch("missing", {}));
  await ts.setState(t1, {
    values: { messages: ["hi"], n: 1 },
    interrupts: { task: [{ id: "i", value: 1 }] },
    status: "interrupted",
  });
  await ts.setState(t2, { values: null, interrupts: {} });
  for (const sort_by of ["thread_id", "status", "created_at", "updated_at"] as const) {
    log.push(await ts.search({ sort_by, sort_order: "desc", limit: 10, offset: 0 }));
  }
  log.push(await ts.search({ values: { n: 1 }, sort_by: "thread_id", sort_order: "asc", limit: 10, offset: 0 }));
  log.push(
    await ts.search({ ids: [t2, t0, "x"], status: "idle", sort_by: "thread_id", sort_order: "asc", limit: 10, offset: 0 }),
  );
  log.push(
    await ts.count({ metadata: { owner: "u1" } }),
    await ts.count({ values: {} }),
    await ts.idsByMetadata({ owner: "u2" }),
  );

  // Checkpoints: put, writes, copy with the thread, delete one run's.
  const checkpoint = { ...emptyCheckpoint(), id: "1ef00000-0000-6000-8000-000000000001", channel_values: { a: 1 } };
  checkpoint.channel_versions = { a: "1.x" };
  const config = { configurable: { thread_id: t1, checkpoint_ns: "" } };
  const next = await cp.put(config, checkpoint, meta({ run_id: "r0", thread_id: t1 }), { a: "1.x" });
  await cp.putWrites(
    next,
    [
      ["a", 2],
      ["__error__", "e1"],
      ["__error__", "e2"],
    ],
    "task-1",
  );
  const second = { ...checkpoint, id: "1ef00000-0000-6000-8000-000000000002", channel_versions: { a: "1.x" } };
  await cp.put(next, second, meta({ source: "loop", step: 0, run_id: "r1" }), {});
  log.push(await ts.copy(t1, t3), await ts.copy("missing", t4));
  await cp.deleteRun(t1, "r1");
  for (const threadId of [t1, t3]) {
    for await (const tuple of cp.list({ configurable: { thread_id: threadId } })) log.push(tuple);
  }

  const [r0, r1, r2, r3, r4, r5, _r6] = ids("run", 7);
  const run = (id: string, threadId: string, extra: Partial<Parameters<typeof rs.create>[0]> = {}) =>
    rs.create(newRun(threadId, { run_id: id, available_at: AT, ...extra }));
  log.push(await run(r0, t0), await run(r1, t0, { multitask_strategy: "reject" }), await run(r2, t0));
  log.push(await run(r3, t5, { create_thread: true, thread_config: { c: 1 } }), await run(r4, "missing"));
  log.push(await run(r5, t2, { available_at: AT + 3_600_000 }));
  log.push(
    await rs.inflight(t0),
    await rs.list(t0, { limit: 1, offset: 1 }),
    await rs.list(t0, { limit: 5, offset: 0, status: "pending" }),
  );
  log.push(
    await rs.findActive({}),
    await rs.findActive({ thread_id: t0, status: "pending" }),
    await rs.findActive({ run_ids: [r3, r1] }),
  );
  log.push(await rs.nextAvailableAt());
  log.push(await rs.claim("w", 60_000), await rs.claim("w", 60_000), await rs.claim("w", 60_000));
  await rs.finish(r0, { status: "success", output: { v: 1 }, thread: { values: { v: 1 }, interrupts: {} } });
  log.push(await ts.get(t0), await rs.get(r0));
  log.push(await rs.claim("w", 60_000));
  await rs.finish(r2, {
    status: "interrupted",
    output: null,
    thread: { values: { v: 2 }, interrupts: {}, status: "interrupted" },
  });
  log.push(await ts.get(t0), await rs.cancelPending(r2), await rs.cancelPending(r5), await ts.get(t2));
  log.push(await rs.release("nobody"), await rs.release("w"), await rs.get(r3), await ts.get(t5));
  await rs.appendEvents(r3, [
    { seq: 0, event: "metadata", data: "{}" },
    { seq: 1, event: "values", data: '{"a":1}' },
  ]);
  log.push(await rs.readEvents(r3, 0), await rs.lastEventSeq(r3));
  await rs.discard(r3, { values: { d: true }, interrupts: {} });
  log.push(await ts.get(t5), await rs.get(r3), await rs.delete(r0), await rs.delete(r0));
  log.push(await ts.delete(t1), await ts.delete(t1), await cp.getTuple(config));
  log.push(await ts.search({ sort_by: "created_at", sort_order: "asc", limit: 10, offset: 0 }));
  return log;
}

/** Timestamps become "<time>" (after checking their format); Buffers become arrays. */
function normalize(value: unknown): unknown {
  if (typeof value === "string" && /^\d{4}-\d\d-\d\dT/.test(value)) {
    assert.match(value, ISO);
    return "<time>";
  }
  if (value instanceof Uint8Array) return [...value];
  if (Array.isArray(value)) return value.map(normalize);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, normalize(item)]));
  }
  return value;
}

/** Top-level key orders of the API objects in the log (JSONB reorders nested keys only). */
function keyOrders(log: unknown[]): string[] {
  return log
    .flat()
    .flatMap((item) => (item && typeof item === "object" && !Array.isArray(item) ? [Object.keys(item).join()] : []));
}

/** PostgreSQL gives the results SQLite gives, for one script of calls to every repository. */
export function parityWithSqlite(): void {
  it("gives the same results as SQLite for the same calls", async () => {
    const dir = mkdtempSync(join(tmpdir(), "berth-parity-"));
    const sqlite = createSqliteStorage(dir, "normal");
    const schema = await freshSchema();
    const postgres = await createPostgresStorage(schema.url);
    try {
      const expected = await script(sqlite);
      const actual = await script(postgres);
      assert.deepEqual(normalize(actual), normalize(expected));
      assert.deepEqual(keyOrders(actual), keyOrders(expected));
    } finally {
      await sqlite.close();
      await postgres.close();
      await schema.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
