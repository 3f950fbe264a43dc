import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
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

const WORKERS = 8;

describe("runs on the main thread and, under load, an execution thread beside it (BERTH_EXECUTION_THREAD=auto)", {
  skip: (!sqlite && "embedded SQLite only") || (availableParallelism() < 2 && "auto needs a host with two cores"),
}, () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({
      project: "execution-thread",
      env: { BERTH_EXECUTION_THREAD: "auto", BERTH_WORKERS: String(WORKERS) },
    });
  });
  after(() => berth?.stop());

  const workers = async () => ((await request(berth.url, "GET", "/metrics")).body as { workers: { max: number } }).workers.max;

  /** One run of `where` waited for: the thread that executed it, or what the response was instead. */
  async function where(input: Record<string, unknown>): Promise<string> {
    const response = await request(berth.url, "POST", "/runs/wait", { assistant_id: "where", input });
    if (response.status !== 200) return `status ${response.status}`;
    return (response.body as { thread: string }).thread;
  }

  /**
   * Keeps `clients` runs of `where` spinning 20 ms each in flight, one after the other, until `done` says so or
   * `limit` runs have ended; returns where each ran.
   */
  async function busy(done: (threads: string[]) => boolean, clients = 4, limit = 600): Promise<string[]> {
    const threads: string[] = [];
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (!done(threads) && threads.length < limit) threads.push(await where({ spin: 20 }));
      }),
    );
    return threads;
  }

  it("a lone run executes on the main thread; under load an execution thread starts and runs execute on both", async () => {
    assert.equal(await where({}), "main");
    assert.equal(await workers(), WORKERS, "no execution thread while the server is idle");
    const beforeThread = await busy(() => /starting an execution thread beside it/.test(berth.output()));
    assert.match(berth.output(), /starting an execution thread beside it/);
    const inThread = (threads: string[]) => threads.filter((thread) => thread === "execution").length;
    const afterStart = await busy((threads) => inThread(threads) >= 5);
    const all = [...beforeThread, ...afterStart];
    assert.deepEqual(
      all.filter((thread) => thread !== "main" && thread !== "execution"),
      [],
      "every run succeeded",
    );
    assert.ok(all.includes("main"), "runs executed on the main thread");
    assert.ok(inThread(afterStart) > 0, "runs executed in the execution thread");
    assert.equal(await workers(), 2 * WORKERS, "the execution thread's slots counted");
  });

  it("an execution thread that dies beside the main thread leaves no run stuck, and the process serves on", async () => {
    let exited = false;
    const load = busy(() => exited, 2);
    let marker = "";
    let outcome = "";
    for (let attempt = 0; attempt < 50 && !exited; attempt++) {
      marker = join(newDataDir("berth-exit-marker-"), "exited");
      outcome = await where({ marker });
      exited = existsSync(marker);
    }
    await load;
    assert.ok(exited, "a run landed in the execution thread and exited it");
    assert.ok(outcome === "main" || outcome === "execution", `the run ended with its output (${outcome})`);
    assert.match(berth.output(), /the execution thread exited/);
    assert.ok(berth.alive(), "the process outlived its execution thread");
    assert.equal(await where({}), "main");
  });
});
