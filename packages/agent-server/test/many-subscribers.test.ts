// Many subscribers of one run: more than the server hands events to in one turn of its event loop, so some of them get
// each event a turn or more later. Each must still get every event once, in order, then the run's end.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, startBerth } from "@berth/test-support";
import { collect } from "./helpers/streams.js";

/** Several times the event deliveries a turn of the server's event loop makes before deferring the rest. */
const SUBSCRIBERS = 1500;
const STEPS = 8;

describe("a run followed by more subscribers than one turn serves", () => {
  let api: BerthProcess;

  before(async () => {
    api = await startBerth();
  });
  after(() => api?.stop());

  it("gives every subscriber every event once, in order, and the end, whenever it joined", async () => {
    const thread = await api.client.threads.create();
    const run = await api.client.runs.create(thread.thread_id, "slow", {
      input: { steps: STEPS, delay_ms: 150 },
      streamMode: ["custom"],
    });
    // Joined while the run emits: the first ones replay what came before them, the later ones join mid-run.
    const streams = await Promise.all(
      Array.from({ length: SUBSCRIBERS }, () =>
        collect(api.client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" })),
      ),
    );
    const expected = Array.from({ length: STEPS }, (_, i) => i + 1);
    for (const [i, parts] of streams.entries()) {
      const progress = parts
        .filter((part) => part.event === "custom")
        .map((part) => (part.data as { progress: number }).progress);
      assert.deepEqual(progress, expected, `subscriber ${i}: ${JSON.stringify(parts.map((part) => part.event))}`);
      assert.ok(!parts.some((part) => part.event === "error"), `subscriber ${i} got an error`);
    }
    const ended = await api.client.runs.get(thread.thread_id, run.run_id);
    assert.equal(ended.status, "success");
  });
});
