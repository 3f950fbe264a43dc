// A run's end written with the last events of its log, on each backend.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RunEnd, Storage } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { createdRun, newThread } from "./fixtures.js";

const event = (seq: number, data = `{"n":${seq}}`) => ({ seq, event: "values", data });

/** A claimed run with two events logged already; its id and lease. */
async function runningWithLog(storage: Storage) {
  const runId = await createdRun(storage, await newThread(storage));
  const claimed = await storage.runs.claim("worker", 60_000);
  assert.equal(claimed?.run_id, runId);
  const lease = { owner: "worker", attempt: claimed.attempt };
  assert.equal(await storage.runs.appendEvents(runId, [event(0), event(1)], lease), true);
  return { runId, lease };
}

const ended = (extra: Partial<RunEnd>): RunEnd => ({
  status: "success",
  output: { n: 3 },
  thread: { values: { n: 3 }, interrupts: {} },
  ...extra,
});

export function runEndEventsContract(backend: Backend): void {
  describe("runs.finish with the log's last events", () => {
    const test = databasePerTest(backend);

    it("logs them with the end, an event logged already kept as it was", async () => {
      const { storage } = test;
      const { runId, lease } = await runningWithLog(storage);
      const events = [event(1, '{"n":"again"}'), event(2), event(3)];
      assert.equal(await storage.runs.finish(runId, ended({ events }), lease), true);
      assert.deepEqual(await storage.runs.readEvents(runId, -1), [event(0), event(1), event(2), event(3)]);
      assert.equal((await storage.runs.get(runId))?.status, "success");
    });

    it("logs them with a webhook's delivery too", async () => {
      const { storage } = test;
      const { runId, lease } = await runningWithLog(storage);
      const webhook = { url: "https://hooks.example.com/x", payload: { run_id: runId }, giveUpAt: Date.now() + 60_000 };
      assert.equal(await storage.runs.finish(runId, ended({ events: [event(2)], webhook }), lease), true);
      assert.deepEqual(await storage.runs.readEvents(runId, 1), [event(2)]);
      assert.equal((await storage.webhooks.get(runId))?.status, "pending");
    });

    it("logs nothing when the lease is lost", async () => {
      const { storage } = test;
      const { runId } = await runningWithLog(storage);
      const lost = { owner: "someone-else", attempt: 1 };
      assert.equal(await storage.runs.finish(runId, ended({ events: [event(2)] }), lost), false);
      assert.deepEqual(await storage.runs.readEvents(runId, 1), []);
      assert.equal((await storage.runs.get(runId))?.status, "running");
    });
  });
}
