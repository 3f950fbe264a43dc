// The repositories under concurrency: two storages over one database stand
// for two Berth processes sharing it.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { beforeEach, describe, it } from "node:test";
import type { Storage } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { clockPast, newRun, newThread, sleep } from "./fixtures.js";

export function sharedDatabaseContract(backend: Backend): void {
  describe("two storages over one database", () => {
    const db = databasePerTest(backend);
    let a: Storage;
    let b: Storage;

    beforeEach(async () => {
      a = db.storage;
      b = await db.open();
    });

    it("creates exactly one of 20 concurrent reject runs on an existing thread", async () => {
      const threadId = await newThread(a);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).runs.create(newRun(threadId, { multitask_strategy: "reject" }))),
      );
      assert.equal(results.filter((result) => result.kind === "created").length, 1);
      assert.equal(results.filter((result) => result.kind === "thread_busy").length, 19);
      assert.equal((await a.runs.inflight(threadId)).length, 1);
      assert.equal((await a.threads.get(threadId))?.status, "busy");
    });

    it("creates the thread once and one run among 20 concurrent reject runs on a new thread", async () => {
      const threadId = randomUUID();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? a : b).runs.create(newRun(threadId, { multitask_strategy: "reject", create_thread: true })),
        ),
      );
      assert.equal(results.filter((result) => result.kind === "created").length, 1);
      assert.equal(results.filter((result) => result.kind === "thread_busy").length, 19);
      const thread = await b.threads.get(threadId);
      assert.deepEqual(thread?.metadata, { graph_id: "graph-1", assistant_id: "assistant-1" });
    });

    it("claims FIFO per thread, never two running runs of a thread, under concurrent claims from two storages", async () => {
      const threads = [await newThread(a), await newThread(a), await newThread(a)];
      const created = new Map<string, string[]>(threads.map((threadId) => [threadId, []]));
      for (let i = 0; i < 6; i++) {
        for (const threadId of threads) {
          const result = await (i % 2 ? a : b).runs.create(newRun(threadId));
          assert.equal(result.kind, "created");
          if (result.kind === "created") created.get(threadId)?.push(result.run.run_id);
        }
      }
      const total = threads.length * 6;
      const claimed = new Map<string, string[]>(threads.map((threadId) => [threadId, []]));
      const running = new Set<string>();
      let finished = 0;
      // Two workers per storage, each claiming, holding the run a moment, then finishing it.
      const worker = async (storage: Storage, owner: string) => {
        while (finished < total) {
          const run = await storage.runs.claim(owner, 60_000);
          if (!run) {
            await sleep(2);
            continue;
          }
          assert.ok(!running.has(run.thread_id), `two running runs on thread ${run.thread_id}`);
          assert.equal(run.attempt, 1);
          running.add(run.thread_id);
          claimed.get(run.thread_id)?.push(run.run_id);
          await sleep(3);
          running.delete(run.thread_id); // before finish commits: the next claim may follow at once
          await storage.runs.finish(run.run_id, {
            status: "success",
            output: { done: true },
            thread: { values: { n: 1 }, interrupts: {} },
          });
          finished++;
        }
      };
      await Promise.all([worker(a, "a1"), worker(a, "a2"), worker(b, "b1"), worker(b, "b2")]);
      assert.deepEqual(claimed, created);
      for (const threadId of threads) {
        const thread = await a.threads.get(threadId);
        assert.equal(thread?.status, "idle");
        assert.deepEqual(thread?.values, { n: 1 });
      }
    });

    it("keeps a thread's later runs behind its first pending run, even when that one is not yet available", async () => {
      const threadId = await newThread(a);
      const delayed = await a.runs.create(newRun(threadId, { available_at: Date.now() + 60_000 }));
      await a.runs.create(newRun(threadId));
      assert.equal(delayed.kind, "created");
      assert.equal(await b.runs.claim("b", 60_000), undefined);
      assert.ok(((await b.runs.nextAvailableAt()) ?? 0) > Date.now());
      if (delayed.kind === "created") assert.equal(await a.runs.cancelPending(delayed.run.run_id), true);
      assert.equal((await b.runs.claim("b", 60_000))?.thread_id, threadId);
    });

    it("requeues a run whose lease lapsed, and not one whose lease is renewed", async () => {
      const threadId = await newThread(a);
      const created = await a.runs.create(newRun(threadId));
      assert.equal(created.kind, "created");
      const first = await a.runs.claim("owner-1", 60_000);
      assert.equal(first?.thread_id, threadId);
      assert.equal(await b.runs.requeueExpired({ all: false }), 0);
      // The lease lapses (a millisecond long, and the clock past its end), then is renewed before a sweep: held again.
      await a.runs.heartbeat("owner-1", 1);
      await clockPast(Date.now() + 1);
      await a.runs.heartbeat("owner-1", 60_000);
      assert.equal(await b.runs.requeueExpired({ all: false }), 0);
      // Not renewed this time: requeued.
      await a.runs.heartbeat("owner-1", 1);
      await clockPast(Date.now() + 1);
      assert.equal(await b.runs.requeueExpired({ all: false }), 1);
      const requeued = await b.runs.get(first?.run_id ?? "");
      assert.equal(requeued?.status, "pending");
      const second = await b.runs.claim("owner-2", 60_000);
      assert.equal(second?.run_id, first?.run_id);
      assert.equal(second?.attempt, 2);
      // A restart requeues running runs whatever their lease.
      assert.equal(await a.runs.requeueExpired({ all: true }), 1);
      assert.equal((await a.runs.get(first?.run_id ?? ""))?.status, "pending");
      // A worker shutting down hands on its runs, and only its own.
      const other = await newThread(a);
      await a.runs.create(newRun(other));
      assert.equal((await a.runs.claim("owner-3", 60_000))?.run_id, first?.run_id);
      assert.equal((await b.runs.claim("owner-4", 60_000))?.thread_id, other);
      assert.equal(await b.runs.release("owner-3"), 1);
      assert.equal((await a.runs.get(first?.run_id ?? ""))?.status, "pending");
      assert.equal((await a.runs.findActive({ status: "running" }))[0]?.thread_id, other);
    });

    it("finishes a temporary run with its thread, and settles thread status with the runs still waiting", async () => {
      const threadId = await newThread(a);
      const one = await a.runs.create(newRun(threadId));
      const two = await a.runs.create(newRun(threadId));
      assert.ok(one.kind === "created" && two.kind === "created");
      const claimed = await b.runs.claim("w", 60_000);
      assert.equal(claimed?.run_id, one.run.run_id);
      await b.runs.finish(one.run.run_id, { status: "success", output: null, thread: { values: {}, interrupts: {} } });
      assert.equal((await a.threads.get(threadId))?.status, "busy"); // run two waits
      assert.equal(await a.runs.cancelPending(two.run.run_id), true);
      assert.equal((await a.threads.get(threadId))?.status, "idle");

      const temporary = randomUUID();
      const run = await a.runs.create(newRun(temporary, { create_thread: true }));
      assert.equal(run.kind, "created");
      const started = await b.runs.claim("w", 60_000);
      assert.equal(started?.thread_id, temporary);
      await b.runs.finish(started?.run_id ?? "", {
        status: "success",
        output: {},
        thread: { values: {}, interrupts: {} },
        deleteThread: true,
      });
      assert.equal(await a.threads.get(temporary), undefined);
      assert.equal(await a.runs.get(started?.run_id ?? ""), undefined);
    });

    it("appends, reads and prunes run events idempotently, with seqs beyond 32 bits", async () => {
      const threadId = await newThread(a);
      const created = await a.runs.create(newRun(threadId));
      assert.ok(created.kind === "created");
      const runId = created.run.run_id;
      const big = 2_000_000_001;
      await a.runs.appendEvents(runId, [
        { seq: 0, event: "metadata", data: '{"run_id":"x"}' },
        { seq: big, event: "values", data: '{"a":"\\u0000"}' },
      ]);
      await b.runs.appendEvents(runId, [{ seq: 0, event: "other", data: "{}" }]); // already logged: kept as is
      assert.deepEqual(await b.runs.readEvents(runId, -1), [
        { seq: 0, event: "metadata", data: '{"run_id":"x"}' },
        { seq: big, event: "values", data: '{"a":"\\u0000"}' },
      ]);
      assert.equal(await b.runs.lastEventSeq(runId), big);
      assert.equal(await b.runs.lastEventSeq(randomUUID()), -1);
      await b.runs.claim("w", 60_000);
      await b.runs.finish(runId, { status: "error", output: { __error__: {} }, thread: { values: null, interrupts: {} } });
      assert.equal((await a.threads.get(threadId))?.status, "idle");
      assert.equal(await a.runs.pruneEvents(new Date(Date.now() - 60_000).toISOString()), 0);
      assert.equal(await a.runs.pruneEvents(new Date(Date.now() + 1_000).toISOString()), 2);
      assert.deepEqual(await a.runs.readEvents(runId, -1), []);
    });
  });
}
