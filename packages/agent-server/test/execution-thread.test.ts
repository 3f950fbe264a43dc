import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, newDataDir, request, startBerth } from "@berth/test-support";
import { sseEvents } from "./helpers/sse.js";

// Only on embedded SQLite: the execution thread is a SQLite server's.
const sqlite = (process.env.BERTH_TEST_BACKEND ?? "sqlite") === "sqlite";

describe("the execution thread (BERTH_EXECUTION_THREAD=on)", { skip: !sqlite && "embedded SQLite only" }, () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "execution-thread", env: { BERTH_EXECUTION_THREAD: "on" } });
  });
  after(() => berth?.stop());

  it("streams a run's events to the main thread as they come", async () => {
    const response = await fetch(`${berth.url}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "exits", input: { text: "hi" }, stream_mode: ["values"] }),
    });
    assert.equal(response.status, 200);
    const names: string[] = [];
    let last: unknown;
    for await (const event of sseEvents(response.body!)) {
      names.push(event.event);
      if (event.event === "values") last = event.data;
    }
    assert.deepEqual(names, ["metadata", "values", "values"]);
    assert.deepEqual(last, { text: "done" });
  });

  it("a thread that dies leaves no run stuck: the next one resumes it, the process serves on", async () => {
    const marker = join(newDataDir("berth-exit-marker-"), "exited");
    const thread = await request(berth.url, "POST", "/threads", {});
    const threadId = (thread.body as { thread_id: string }).thread_id;
    const waited = await request(berth.url, "POST", `/threads/${threadId}/runs/wait`, {
      assistant_id: "exits",
      input: { marker },
    });
    assert.equal(waited.status, 200);
    assert.ok(existsSync(marker), "the first attempt exited its thread");
    assert.equal((waited.body as { text: string }).text, "done");
    const runs = await request(berth.url, "GET", `/threads/${threadId}/runs`);
    const [run] = runs.body as { status: string }[];
    assert.equal(run.status, "success");
    assert.ok(berth.alive(), "the process outlived its execution thread");
    assert.match(berth.output(), /the execution thread exited/);
  });
});
