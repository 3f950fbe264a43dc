// Crons through the SDK's client.crons: the official shapes, 422s and 404s, runs created on schedule (metadata.cron_id),
// thread and stateless crons, on_run_completed, disabled crons, no burst of missed ticks after a restart, and exactly
// one run per tick from two processes sharing one PostgreSQL database.
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import type { Client, Cron, Run } from "@langchain/langgraph-sdk";
import { type BerthProcess, newDataDir, request, startBerth, TEST_BACKEND } from "@berth/test-support";

/** Every second: cron-parser reads a 6th field as seconds, first. */
const EVERY_SECOND = "* * * * * *";
/** The scheduler looks for due crons this often in the test servers. */
const FAST_POLL = { BERTH_CRON_POLL_SECONDS: "0.05" };

/** Polls until `check` gives a value (runs are created on the clock: there is no event to await). */
async function until<T>(what: string, check: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) assert.fail(`timed out: ${what}`);
    await sleep(50);
  }
}

const CRON_KEYS = [
  "assistant_id",
  "created_at",
  "cron_id",
  "enabled",
  "end_time",
  "metadata",
  "next_run_date",
  "on_run_completed",
  "payload",
  "schedule",
  "thread_id",
  "timezone",
  "updated_at",
  "user_id",
];

/** The runs of a thread that a cron created, oldest first. */
async function cronRuns(client: Client, threadId: string, cronId: string): Promise<Run[]> {
  const runs = await client.runs.list(threadId, { limit: 1000 });
  return runs.filter((run) => run.metadata?.cron_id === cronId).reverse();
}

const tickOf = (run: Run) => String(run.metadata?.cron_run_date);

/** The SDK types what creating a cron answers narrower than the Cron it is (the server sends every field). */
const full = (cron: unknown) => cron as Cron;

describe("crons", () => {
  let berth: BerthProcess;
  let client: Client;
  before(async () => {
    berth = await startBerth({ project: "crons", env: FAST_POLL });
    client = berth.client;
  });
  after(() => berth.stop());

  it("creates, gets, searches, counts, updates and deletes crons through the SDK", async () => {
    const suite = crypto.randomUUID();
    const thread = await client.threads.create();
    const before = Date.now();
    const daily = full(
      await client.crons.create("probe", {
        schedule: "0 9 * * *",
        timezone: "America/New_York",
        input: { tag: suite },
        metadata: { suite, kind: "daily" },
      }),
    );
    assert.deepEqual(Object.keys(daily).sort(), CRON_KEYS);
    assert.equal(daily.thread_id, null);
    assert.equal(daily.on_run_completed, "delete", "a stateless cron deletes its runs' threads by default");
    assert.equal(daily.user_id, null);
    assert.equal(daily.enabled, true);
    assert.equal(daily.schedule, "0 9 * * *");
    assert.equal(daily.timezone, "America/New_York");
    assert.deepEqual(daily.payload.input, { tag: suite });
    assert.deepEqual(daily.metadata, { suite, kind: "daily" });
    // 09:00 in New York is 13:00 or 14:00 UTC (daylight saving time or not), within the next day.
    const next = new Date(daily.next_run_date!);
    assert.ok([13, 14].includes(next.getUTCHours()) && next.getUTCMinutes() === 0, daily.next_run_date!);
    assert.ok(next.getTime() > before && next.getTime() <= before + 25 * 3_600_000);

    const onThread = full(
      await client.crons.createForThread(thread.thread_id, "probe", {
        schedule: "*/5 * * * *",
        input: { tag: suite },
        metadata: { suite, kind: "thread" },
        enabled: false,
      }),
    );
    assert.deepEqual(Object.keys(onThread).sort(), CRON_KEYS);
    assert.equal(onThread.thread_id, thread.thread_id);
    assert.equal(onThread.on_run_completed, null);
    assert.equal(onThread.next_run_date, null, "a disabled cron has nothing scheduled");

    const got = await request(berth.url, "GET", `/runs/crons/${daily.cron_id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, daily);

    const ids = (crons: Partial<Cron>[]) => crons.map((cron) => cron.cron_id).sort();
    assert.deepEqual(ids(await client.crons.search({ metadata: { suite } })), [daily.cron_id, onThread.cron_id].sort());
    assert.deepEqual(ids(await client.crons.search({ threadId: thread.thread_id })), [onThread.cron_id]);
    assert.deepEqual(ids(await client.crons.search({ metadata: { suite }, enabled: false })), [onThread.cron_id]);
    assert.deepEqual(
      ids(await client.crons.search({ metadata: { suite }, assistantId: daily.assistant_id })),
      ids([daily, onThread]),
    );
    assert.equal(await client.crons.count({ metadata: { suite }, assistantId: "probe" }), 2, "a graph id names its assistant");
    assert.equal(daily.payload.assistant_id, daily.assistant_id);
    const byNext = await client.crons.search({ metadata: { suite }, sortBy: "next_run_date", sortOrder: "asc" });
    assert.equal(byNext.length, 2);
    const page = await client.crons.search({ metadata: { suite }, limit: 1, offset: 1, sortBy: "created_at", sortOrder: "asc" });
    assert.deepEqual(ids(page), [onThread.cron_id]);
    const selected = await client.crons.search({ metadata: { suite, kind: "daily" }, select: ["cron_id", "schedule"] });
    assert.deepEqual(selected, [{ cron_id: daily.cron_id, schedule: "0 9 * * *" }]);
    const total = await request(berth.url, "POST", "/runs/crons/search", { metadata: { suite }, limit: 1 });
    assert.equal(total.headers.get("x-pagination-total"), "2");
    assert.equal(await client.crons.count({ metadata: { suite } }), 2);
    assert.equal(await client.crons.count({ threadId: thread.thread_id }), 1);
    assert.equal(await client.crons.count({ metadata: { suite: crypto.randomUUID() } }), 0);

    const moved = await client.crons.update(daily.cron_id, { schedule: "30 10 * * *", metadata: { extra: 1 } });
    assert.equal(moved.schedule, "30 10 * * *");
    assert.deepEqual(moved.metadata, { suite, kind: "daily", extra: 1 }, "metadata is merged");
    assert.equal(new Date(moved.next_run_date!).getUTCMinutes(), 30, "a new schedule reschedules the cron");
    assert.deepEqual(moved.payload.input, { tag: suite }, "what the patch leaves out stays");
    assert.ok(moved.updated_at >= daily.updated_at);

    const enabled = await client.crons.update(onThread.cron_id, { enabled: true });
    assert.equal(enabled.enabled, true);
    assert.ok(enabled.next_run_date && Date.parse(enabled.next_run_date) > Date.now() - 1_000);
    const ended = await client.crons.update(onThread.cron_id, { endTime: new Date(Date.now() - 60_000).toISOString() });
    assert.equal(ended.next_run_date, null, "past its end_time, nothing is scheduled");
    const reopened = await client.crons.update(onThread.cron_id, { endTime: null });
    assert.equal(reopened.end_time, null);
    assert.ok(reopened.next_run_date);

    await client.crons.delete(daily.cron_id);
    assert.equal((await request(berth.url, "GET", `/runs/crons/${daily.cron_id}`)).status, 404);
    assert.equal((await request(berth.url, "DELETE", `/runs/crons/${daily.cron_id}`)).status, 404);
    // A thread's crons go with it.
    await client.threads.delete(thread.thread_id);
    assert.equal((await request(berth.url, "GET", `/runs/crons/${onThread.cron_id}`)).status, 404);
  });

  it("refuses invalid bodies with 422 and the field's location", async () => {
    const valid = { assistant_id: "probe", schedule: "*/5 * * * *" };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...valid, schedule: "not a cron" }, "schedule"],
      [{ ...valid, schedule: "61 * * * *" }, "schedule"],
      [{ ...valid, schedule: "" }, "schedule"],
      [{ ...valid, schedule: 5 }, "schedule"],
      [{ assistant_id: "probe" }, "schedule"],
      [{ schedule: "* * * * *" }, "assistant_id"],
      [{ ...valid, timezone: "Mars/Olympus" }, "timezone"],
      [{ ...valid, end_time: "tomorrow" }, "end_time"],
      [{ ...valid, on_run_completed: "archive" }, "on_run_completed"],
      [{ ...valid, multitask_strategy: "sometimes" }, "multitask_strategy"],
      [{ ...valid, enabled: "yes" }, "enabled"],
      [{ ...valid, webhook: "ftp://example.com" }, "webhook"],
    ];
    for (const [body, field] of cases) {
      const response = await request(berth.url, "POST", "/runs/crons", body);
      assert.equal(response.status, 422, JSON.stringify(body));
      const detail = (response.body as { detail: { loc: string[]; msg: string; type: string }[] }).detail;
      assert.deepEqual(detail[0]?.loc, ["body", field], JSON.stringify(detail));
      assert.equal(typeof detail[0]?.msg, "string");
    }
    const cron = await client.crons.create("probe", { schedule: "0 0 1 1 *", enabled: false });
    for (const body of [{ schedule: "every day" }, { timezone: "Nowhere/City" }, { enabled: 1 }, { end_time: "soon" }]) {
      assert.equal((await request(berth.url, "PATCH", `/runs/crons/${cron.cron_id}`, body)).status, 422, JSON.stringify(body));
    }
    for (const body of [{ sort_by: "schedule" }, { select: ["nope"] }, { limit: 0 }, { thread_id: "not-a-uuid" }]) {
      assert.equal((await request(berth.url, "POST", "/runs/crons/search", body)).status, 422, JSON.stringify(body));
    }
    assert.equal((await request(berth.url, "GET", "/runs/crons/not-a-uuid")).status, 422);
    assert.equal((await request(berth.url, "POST", "/runs/crons", "{not json")).status, 422);
    // Nothing half-written: the refused crons do not exist.
    assert.equal(await client.crons.count({ assistantId: cron.assistant_id }), 1);
    await client.crons.delete(cron.cron_id);
  });

  it("answers 404 for an unknown cron, thread or assistant", async () => {
    const unknown = crypto.randomUUID();
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { enabled: false }],
      ["DELETE", undefined],
    ] as const) {
      const response = await request(berth.url, method, `/runs/crons/${unknown}`, body);
      assert.equal(response.status, 404, method);
      assert.equal(typeof (response.body as { detail: unknown }).detail, "string");
    }
    const noAssistant = await request(berth.url, "POST", "/runs/crons", { assistant_id: "nope", schedule: "* * * * *" });
    assert.equal(noAssistant.status, 404);
    const noThread = await request(berth.url, "POST", `/threads/${unknown}/runs/crons`, {
      assistant_id: "probe",
      schedule: "* * * * *",
    });
    assert.equal(noThread.status, 404);
    const thread = await client.threads.create();
    const noAssistantOnThread = await request(berth.url, "POST", `/threads/${thread.thread_id}/runs/crons`, {
      assistant_id: crypto.randomUUID(),
      schedule: "* * * * *",
    });
    assert.equal(noAssistantOnThread.status, 404);
    assert.equal(await client.crons.count({ threadId: thread.thread_id }), 0);
  });

  it("runs a thread cron on its thread every tick, each run carrying metadata.cron_id; a disabled cron does not fire", async () => {
    const tag = crypto.randomUUID();
    const [thread, idleThread] = await Promise.all([client.threads.create(), client.threads.create()]);
    const cron = await client.crons.createForThread(thread.thread_id, "probe", {
      schedule: EVERY_SECOND,
      input: { tag },
      metadata: { tag },
      multitaskStrategy: "enqueue",
    });
    const neverEnabled = await client.crons.createForThread(idleThread.thread_id, "probe", {
      schedule: EVERY_SECOND,
      input: { tag },
      enabled: false,
    });
    const runs = await until("two runs of the thread cron ended", async () => {
      const found = await cronRuns(client, thread.thread_id, cron.cron_id);
      return found.filter((run) => run.status === "success").length >= 2 && found;
    });
    for (const run of runs) {
      assert.equal(run.thread_id, thread.thread_id);
      assert.equal(run.metadata?.cron_id, cron.cron_id);
      assert.equal(run.metadata?.tag, tag, "the cron's metadata goes to its runs");
    }
    assert.equal(new Set(runs.map(tickOf)).size, runs.length, "one run per tick");
    const state = await client.threads.getState<{ runs: number }>(thread.thread_id);
    assert.ok(state.values.runs >= 2, "the runs went to the thread's state");

    // Disabled: no tick fires, while a control cron (same schedule, same scheduler) keeps firing.
    const disabled = await client.crons.update(cron.cron_id, { enabled: false });
    assert.equal(disabled.next_run_date, null);
    const afterDisabling = (await cronRuns(client, thread.thread_id, cron.cron_id)).length;
    const control = await client.threads.create();
    const controlCron = await client.crons.createForThread(control.thread_id, "probe", {
      schedule: EVERY_SECOND,
      input: { tag },
      multitaskStrategy: "enqueue",
    });
    await until(
      "the control cron fired three times",
      async () => (await cronRuns(client, control.thread_id, controlCron.cron_id)).length >= 3,
    );
    assert.equal(
      (await cronRuns(client, thread.thread_id, cron.cron_id)).length,
      afterDisabling,
      "the disabled cron did not fire",
    );
    assert.equal((await client.runs.list(idleThread.thread_id)).length, 0, "a cron created disabled never fired");
    await Promise.all([controlCron, neverEnabled].map((c) => client.crons.delete(c.cron_id)));
  });

  it("a cron PATCHed enabled fires again, and stops once its end_time has passed", async () => {
    const tag = crypto.randomUUID();
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, "probe", {
      schedule: EVERY_SECOND,
      input: { tag },
      multitaskStrategy: "enqueue",
      enabled: false,
    });
    const enabled = await client.crons.update(cron.cron_id, { enabled: true });
    assert.ok(enabled.next_run_date, "enabled: a tick is scheduled");
    await until("a run once enabled", async () => (await cronRuns(client, thread.thread_id, cron.cron_id)).length >= 1);

    const endTime = new Date(Date.now() + 1_500).toISOString();
    await client.crons.update(cron.cron_id, { endTime });
    await until("the cron scheduled nothing more", async () => {
      const current = full(await client.crons.search({ threadId: thread.thread_id }).then((found) => found[0]));
      return current.next_run_date === null;
    });
    const stopped = await cronRuns(client, thread.thread_id, cron.cron_id);
    assert.ok(
      stopped.every((run) => Date.parse(tickOf(run)) <= Date.parse(endTime)),
      `no tick after end_time: ${stopped.map(tickOf).join(", ")}`,
    );
    // A control cron on the same scheduler fires twice more: the ended one stays silent meanwhile.
    const control = await client.threads.create();
    const controlCron = await client.crons.createForThread(control.thread_id, "probe", {
      schedule: EVERY_SECOND,
      input: { tag },
      multitaskStrategy: "enqueue",
    });
    await until(
      "the control cron fired twice",
      async () => (await cronRuns(client, control.thread_id, controlCron.cron_id)).length >= 2,
    );
    assert.equal((await cronRuns(client, thread.thread_id, cron.cron_id)).length, stopped.length, "nothing fired after end_time");
    await Promise.all([cron, controlCron].map((c) => client.crons.delete(c.cron_id)));
  });

  it("a stateless cron runs on a new thread each tick: deleted after the run by default, kept with on_run_completed keep", async () => {
    const keptTag = crypto.randomUUID();
    const deletedTag = crypto.randomUUID();
    const kept = await client.crons.create("probe", { schedule: EVERY_SECOND, input: { tag: keptTag }, onRunCompleted: "keep" });
    const deleted = await client.crons.create("probe", { schedule: EVERY_SECOND, input: { tag: deletedTag } });
    const probe = (tag: string) => client.store.searchItems(["cron-probe", tag], { limit: 100 });
    const [keptItem, deletedItem] = await Promise.all(
      [keptTag, deletedTag].map((tag) => until(`a run of the ${tag} cron`, async () => (await probe(tag)).items[0])),
    );
    await Promise.all([kept, deleted].map((cron) => client.crons.update(cron.cron_id, { enabled: false })));

    // keep: the thread stays with its run, and carries the cron's id.
    const keptThreadId = String(keptItem!.value.thread_id);
    const keptRuns = await until("the kept run ended", async () => {
      const runs = await cronRuns(client, keptThreadId, kept.cron_id);
      return runs.length === 1 && runs[0]!.status === "success" && runs;
    });
    assert.equal(keptRuns[0]!.run_id, keptItem!.value.run_id);
    assert.equal((await client.threads.get(keptThreadId)).metadata?.cron_id, kept.cron_id);
    const keptThreads = await client.threads.search({ metadata: { cron_id: kept.cron_id }, limit: 100 });
    assert.equal(keptThreads.length, (await probe(keptTag)).items.length, "one thread per run");

    // delete: the thread goes once its run ended.
    const deletedThreadId = String(deletedItem!.value.thread_id);
    await until("the deleted cron's thread is gone", async () => {
      return (await request(berth.url, "GET", `/threads/${deletedThreadId}`)).status === 404;
    });
    await until("every thread of the deleting cron is gone", async () => {
      return (await client.threads.count({ metadata: { cron_id: deleted.cron_id } })) === 0;
    });
    await Promise.all([kept, deleted].map((cron) => client.crons.delete(cron.cron_id)));
  });

  it("does not replay the ticks missed while no process ran: one catch-up run, then the next tick", async () => {
    const dataDir = newDataDir();
    const first = await startBerth({ project: "crons", dataDir, env: FAST_POLL });
    const thread = await first.client.threads.create();
    const cron = await first.client.crons.createForThread(thread.thread_id, "probe", {
      schedule: EVERY_SECOND,
      input: { tag: crypto.randomUUID() },
      multitaskStrategy: "enqueue",
    });
    await until("a first run", async () => (await cronRuns(first.client, thread.thread_id, cron.cron_id)).length >= 1);
    await first.stop();
    const stoppedAt = Date.now();
    // Every process is down for at least three ticks: the wall clock has to move on.
    await sleep(3_500);
    const restartedAt = Date.now();
    const second = await startBerth({ project: "crons", dataDir, env: FAST_POLL });
    try {
      await until("a run of a tick after the restart", async () => {
        const runs = await cronRuns(second.client, thread.thread_id, cron.cron_id);
        return runs.some((run) => Date.parse(tickOf(run)) >= restartedAt);
      });
      await second.client.crons.update(cron.cron_id, { enabled: false });
      const runs = await cronRuns(second.client, thread.thread_id, cron.cron_id);
      assert.equal(new Set(runs.map(tickOf)).size, runs.length, "one run per tick");
      const missedTicks = runs.filter((run) => Date.parse(tickOf(run)) >= stoppedAt && Date.parse(tickOf(run)) < restartedAt);
      assert.ok(missedTicks.length <= 1, `ticks of the downtime replayed: ${missedTicks.map(tickOf).join(", ")}`);
      const catchUps = runs.filter((run) => Date.parse(run.created_at) >= restartedAt && Date.parse(tickOf(run)) < restartedAt);
      assert.equal(catchUps.length, 1, "exactly one catch-up run for the ticks missed");
    } finally {
      await second.stop();
    }
  });
});

const skip = TEST_BACKEND !== "postgres" ? "needs PostgreSQL + Redis (BERTH_TEST_BACKEND=postgres)" : false;

describe("crons: two processes on one PostgreSQL database", { skip }, () => {
  const dataDir = newDataDir();
  let processes: BerthProcess[] = [];
  before(async () => {
    processes = await Promise.all([
      startBerth({ project: "crons", dataDir, role: "all", env: FAST_POLL }),
      startBerth({ project: "crons", dataDir, role: "all", env: FAST_POLL }),
    ]);
  });
  after(() => Promise.all(processes.map((berth) => berth.stop())));

  it("create exactly one run per tick", async () => {
    const [a, b] = processes as [BerthProcess, BerthProcess];
    const thread = await a.client.threads.create();
    const cron = await a.client.crons.createForThread(thread.thread_id, "probe", {
      schedule: EVERY_SECOND,
      input: { tag: crypto.randomUUID() },
      multitaskStrategy: "enqueue",
    });
    await until("six runs", async () => (await cronRuns(b.client, thread.thread_id, cron.cron_id)).length >= 6);
    await b.client.crons.update(cron.cron_id, { enabled: false });
    const runs = await cronRuns(a.client, thread.thread_id, cron.cron_id);
    const perTick = new Map<string, number>();
    for (const run of runs) perTick.set(tickOf(run), (perTick.get(tickOf(run)) ?? 0) + 1);
    assert.deepEqual(
      [...perTick].filter(([, count]) => count !== 1),
      [],
      "every tick has exactly one run",
    );
    // Ticks are whole seconds, one after the other (a process's late poll may skip one, never repeat one).
    const ticks = [...perTick.keys()].map(Date.parse).sort((x, y) => x - y);
    for (const tick of ticks) assert.equal(tick % 1000, 0);
    // A process logs a creation just after committing it: the last lines may lag behind what the API shows.
    const logged = () =>
      processes
        .map((berth) => berth.output().match(new RegExp(`"cron_id":"${cron.cron_id}"[^\\n]*cron run created`, "g"))?.length ?? 0)
        .reduce((x, y) => x + y, 0);
    await until("every creation logged", async () => logged() >= runs.length);
    assert.equal(logged(), runs.length, "the processes together logged one creation per run");
  });
});
