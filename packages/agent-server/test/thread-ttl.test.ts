// Thread TTL through the SDK: `ttl` on create and update, langgraph.json's
// checkpointer.ttl defaults, expired threads hidden at once and swept later.
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, startBerth } from "@berth/test-support";

/** Polls until `check` holds (the sweeper runs every 0.6 s in the fixture), failing after `ms`. */
async function eventually(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out: ${what}`);
    await sleep(100);
  }
}

describe("thread ttl", () => {
  // default_ttl 0.05 min (3 s), sweep_interval_minutes 0.01 (0.6 s)
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "thread-ttl" });
  });
  after(() => berth.stop());

  const listed = async (threadId: string) =>
    (await berth.client.threads.search({ ids: [threadId], limit: 10 })).some((t) => t.thread_id === threadId);
  const exists = async (threadId: string) => (await request(berth.url, "GET", `/threads/${threadId}`)).status === 200;

  it("an expired thread leaves search and count at once and is swept with its runs and checkpoints", async () => {
    const marker = { ttl_test: crypto.randomUUID() };
    const thread = await berth.client.threads.create({ metadata: marker, ttl: { ttl: 0.05, strategy: "delete" } });
    await berth.client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "hi" }] } });
    assert.ok(await listed(thread.thread_id));
    assert.equal(await berth.client.threads.count({ metadata: marker }), 1);

    await eventually(async () => !(await listed(thread.thread_id)), 10_000, "expired thread hidden from search");
    assert.equal(await berth.client.threads.count({ metadata: marker }), 0);
    await eventually(async () => !(await exists(thread.thread_id)), 10_000, "expired thread swept");
    assert.equal((await request(berth.url, "GET", `/threads/${thread.thread_id}/runs`)).status, 404);
  });

  it("default_ttl applies to threads created without ttl; null and update's ttl override it", async () => {
    const defaulted = await berth.client.threads.create();
    const forever = await berth.client.threads.create({ ttl: null as unknown as number });
    const extended = await berth.client.threads.create();
    // The SDK sends a bare number as {ttl, strategy: "delete"}; update sends only ttl.
    await berth.client.threads.update(extended.thread_id, { ttl: 60 });
    assert.deepEqual((await berth.client.threads.get(extended.thread_id)).metadata, extended.metadata);

    await eventually(async () => !(await exists(defaulted.thread_id)), 8_000, "default ttl swept the thread");
    assert.ok(await exists(forever.thread_id));
    assert.ok(await listed(forever.thread_id));
    assert.ok(await listed(extended.thread_id));
  });

  it("a bad ttl is a 422", async () => {
    for (const ttl of [0, -1, "x", { ttl: 5, strategy: "archive" }, { strategy: "delete" }]) {
      const response = await request(berth.url, "POST", "/threads", { ttl });
      assert.equal(response.status, 422, JSON.stringify(ttl));
    }
    const { thread_id } = await berth.client.threads.create({ ttl: 60 });
    assert.equal((await request(berth.url, "PATCH", `/threads/${thread_id}`, { ttl: "soon" })).status, 422);
    assert.equal((await request(berth.url, "PATCH", `/threads/${thread_id}`, {})).status, 422, "neither metadata nor ttl");
  });
});
