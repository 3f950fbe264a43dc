// The webhook outbox on each backend: written with a run's end, claimed by
// one owner at a time under a lease, recorded only by its holder.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { NewWebhookDelivery, Storage } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { clockPast, createdRun, ISO, newThread } from "./fixtures.js";

const delivery = (url = "https://hooks.example.com/x"): NewWebhookDelivery => ({
  url,
  payload: { run_id: "r", status: "success", values: { n: 1 } },
  giveUpAt: Date.now() + 60_000,
});

/** A run that ended with a webhook delivery; returns its id. */
async function endedWithWebhook(storage: Storage): Promise<{ runId: string; threadId: string }> {
  const threadId = await newThread(storage);
  const runId = await createdRun(storage, threadId);
  const claimed = await storage.runs.claim("worker", 60_000);
  assert.equal(claimed?.run_id, runId);
  const lease = { owner: "worker", attempt: claimed.attempt };
  const end = { status: "success" as const, output: {}, thread: { values: null, interrupts: {} }, webhook: delivery() };
  assert.equal(await storage.runs.finish(runId, end, lease), true);
  return { runId, threadId };
}

export function webhookOutboxContract(backend: Backend): void {
  describe("webhook outbox", () => {
    const test = databasePerTest(backend);

    it("finish writes the delivery with the run's end; a lost lease writes neither", async () => {
      const { storage } = test;
      const { runId, threadId } = await endedWithWebhook(storage);
      const written = await storage.webhooks.get(runId);
      assert.equal(written?.thread_id, threadId);
      assert.equal(written?.status, "pending");
      assert.equal(written?.attempts, 0);
      assert.match(String(written?.created_at), ISO);

      const other = await createdRun(storage, await newThread(storage));
      await storage.runs.claim("worker", 60_000);
      const end = { status: "success" as const, output: {}, thread: { values: null, interrupts: {} }, webhook: delivery() };
      assert.equal(await storage.runs.finish(other, end, { owner: "someone-else", attempt: 1 }), false);
      assert.equal(await storage.webhooks.get(other), undefined);
    });

    it("a delivery outlives its run and thread", async () => {
      const { storage } = test;
      const { runId, threadId } = await endedWithWebhook(storage);
      assert.equal(await storage.threads.delete(threadId), true);
      assert.equal((await storage.webhooks.get(runId))?.status, "pending");
    });

    it("one owner holds a claim until its lease lapses; only the holder records", async () => {
      const { storage } = test;
      const other = await test.open();
      const { runId } = await endedWithWebhook(storage);
      const [a, b] = await Promise.all([storage.webhooks.claim("a", 200, 10), other.webhooks.claim("b", 200, 10)]);
      assert.equal(a.length + b.length, 1, "claimed once");
      const [holder, loser] = a.length ? ["a", "b"] : ["b", "a"];
      const claimed = [...a, ...b][0];
      assert.equal(claimed.run_id, runId);
      assert.deepEqual(claimed.payload, delivery().payload);
      assert.equal(await other.webhooks.record(runId, loser, { outcome: "delivered", status: 200 }), false);
      await clockPast(Date.now() + 200);
      const again = await other.webhooks.claim("c", 60_000, 10);
      assert.equal(again.length, 1, "a lapsed lease is claimed again");
      assert.equal(await storage.webhooks.record(runId, holder, { outcome: "delivered", status: 200 }), false);
      assert.equal(await other.webhooks.record(runId, "c", { outcome: "delivered", status: 204 }), true);
      const read = await storage.webhooks.get(runId);
      assert.equal(read?.status, "delivered");
      assert.equal(read?.attempts, 1);
      assert.equal(read?.last_status, 204);
      assert.equal(read?.next_attempt_at, null);
      assert.match(String(read?.delivered_at), ISO);
      assert.deepEqual(await storage.webhooks.claim("d", 60_000, 10), [], "a delivered one is not claimed");
    });

    it("a retry waits for its time; a failure ends it; prune deletes ended ones", async () => {
      const { storage } = test;
      const { runId } = await endedWithWebhook(storage);
      await storage.webhooks.claim("a", 60_000, 10);
      const nextAttemptAt = Date.now() + 300;
      assert.equal(
        await storage.webhooks.record(runId, "a", {
          outcome: "retry",
          status: 503,
          error: "the receiver answered 503",
          nextAttemptAt,
        }),
        true,
      );
      const pending = await storage.webhooks.get(runId);
      assert.equal(pending?.status, "pending");
      assert.equal(pending?.last_status, 503);
      assert.equal(pending?.next_attempt_at, new Date(nextAttemptAt).toISOString());
      assert.deepEqual(await storage.webhooks.claim("a", 60_000, 10), [], "not due yet");
      await clockPast(nextAttemptAt);
      const [due] = await storage.webhooks.claim("a", 60_000, 10);
      assert.equal(due.attempts, 1);
      assert.equal(await storage.webhooks.record(runId, "a", { outcome: "failed", status: null, error: "refused" }), true);
      const failed = await storage.webhooks.get(runId);
      assert.equal(failed?.status, "failed");
      assert.equal(failed?.attempts, 2);
      assert.equal(failed?.last_status, null);
      assert.equal(failed?.last_error, "refused");
      assert.equal(await storage.webhooks.prune(new Date(Date.now() - 60_000).toISOString()), 0);
      assert.equal(await storage.webhooks.prune(new Date(Date.now() + 1_000).toISOString()), 1);
      assert.equal(await storage.webhooks.get(runId), undefined);
    });
  });
}
