import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ANSWER } from "./fixtures/graphs/chat.js";
import { type BerthProcess, request, startBerth } from "@berth/test-support";
import { collect } from "./helpers/streams.js";

type Message = { type: string; content: string; id?: string };

describe("runs", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth();
  });
  after(() => berth.stop());

  it("a background run is pending, carries Content-Location, and joins to the final values", async () => {
    const thread = await berth.client.threads.create();
    const response = await request(berth.url, "POST", `/threads/${thread.thread_id}/runs`, {
      assistant_id: "agent",
      input: { messages: [{ type: "human", content: "hi" }] },
      metadata: { origin: "test" },
    });
    assert.equal(response.status, 200);
    const run = response.body as { run_id: string; status: string; thread_id: string; kwargs: Record<string, unknown> };
    assert.equal(run.status, "pending");
    assert.equal(run.thread_id, thread.thread_id);
    assert.equal(response.headers.get("content-location"), `/threads/${thread.thread_id}/runs/${run.run_id}`);
    assert.deepEqual(Object.keys(run.kwargs).sort(), [
      "checkpoint",
      "command",
      "config",
      "context",
      "durability",
      "feedback_keys",
      "input",
      "interrupt_after",
      "interrupt_before",
      "on_completion",
      "on_disconnect",
      "stream_mode",
      "stream_resumable",
      "stream_subgraphs",
      "temporary",
      "webhook",
    ]);
    const values = (await berth.client.runs.join(thread.thread_id, run.run_id)) as { messages: Message[] };
    assert.deepEqual(
      values.messages.map((m) => [m.type, m.content]),
      [
        ["human", "hi"],
        ["ai", "Hello from fixture.env: hi"],
      ],
    );
    const done = await berth.client.runs.get(thread.thread_id, run.run_id);
    assert.equal(done.status, "success");
    const threadAfter = await berth.client.threads.get(thread.thread_id);
    assert.equal(threadAfter.status, "idle");
    assert.equal(threadAfter.metadata?.graph_id, "agent");
    assert.equal(threadAfter.metadata?.assistant_id, "fe096781-5601-53d2-b2f6-0d3403f7e9ca");
    assert.deepEqual((threadAfter.values as { messages: Message[] }).messages.length, 2);
  });

  it("waits for a run's output, and later runs continue the thread", async () => {
    const thread = await berth.client.threads.create();
    const first = (await berth.client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "one" }] },
    })) as { messages: Message[] };
    assert.equal(first.messages.length, 2);
    const second = (await berth.client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "two" }] },
    })) as { messages: Message[] };
    assert.deepEqual(
      second.messages.map((m) => m.content),
      ["one", "Hello from fixture.env: one", "two", "Hello from fixture.env: two"],
    );
    const runs = await berth.client.runs.list(thread.thread_id);
    assert.equal(runs.length, 2);
    assert.ok(runs.every((run) => run.status === "success"));
    const newestFirst = await berth.client.runs.list(thread.thread_id, { limit: 1 });
    assert.equal(newestFirst[0].run_id, runs[0].run_id);
    const older = await berth.client.runs.list(thread.thread_id, { limit: 1, offset: 1 });
    assert.equal(older[0].run_id, runs[1].run_id);
    const successes = await berth.client.runs.list(thread.thread_id, { status: "success" });
    assert.equal(successes.length, 2);
  });

  it("streams values by default, with metadata first and ids on every event", async () => {
    const thread = await berth.client.threads.create();
    const parts = await collect(
      berth.client.runs.stream(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "yo" }] } }),
    );
    assert.equal(parts[0].event, "metadata");
    const metadata = parts[0].data as unknown as { run_id: string; attempt: number };
    assert.equal(metadata.attempt, 1);
    assert.deepEqual(
      parts.slice(1).map((p) => p.event),
      ["values", "values"],
    );
    const last = parts.at(-1)!.data as { messages: Message[] };
    assert.equal(last.messages.at(-1)!.content, "Hello from fixture.env: yo");
  });

  it("streams updates and custom events, each named by its mode", async () => {
    const thread = await berth.client.threads.create();
    const parts = await collect(
      berth.client.runs.stream(thread.thread_id, "slow", {
        input: { steps: 2, delay_ms: 1 },
        streamMode: ["updates", "custom"],
      }),
    );
    assert.deepEqual(
      parts.map((p) => p.event),
      ["metadata", "custom", "updates", "custom", "updates"],
    );
    assert.deepEqual(parts[1].data, { progress: 1 });
    assert.deepEqual(parts[2].data, { step: { done: 1 } });
  });

  it("streams LLM tokens as messages-tuple, with the node in the metadata", async () => {
    const thread = await berth.client.threads.create();
    const parts = await collect(
      berth.client.runs.stream(thread.thread_id, "chat", {
        input: { messages: [{ type: "human", content: "talk" }] },
        streamMode: "messages-tuple",
      }),
    );
    const tokens = parts.filter((p) => p.event === "messages") as unknown as { data: [Message, { langgraph_node: string }] }[];
    const fromModel = tokens.filter((t) => t.data[1].langgraph_node === "model");
    assert.ok(fromModel.length >= ANSWER.length / 2, `expected token-by-token output, got ${fromModel.length} chunks`);
    assert.equal(fromModel.map((t) => t.data[0].content).join(""), ANSWER);
    const fromSummary = tokens.filter((t) => t.data[1].langgraph_node === "summary");
    assert.ok(fromSummary.length >= 1, "a model invoked without streaming still yields messages");
    assert.equal(fromSummary.map((t) => t.data[0].content).join(""), "done");
  });

  it("streams SDK messages mode as metadata, partial and complete events", async () => {
    const thread = await berth.client.threads.create();
    const parts = await collect(
      berth.client.runs.stream(thread.thread_id, "chat", {
        input: { messages: [{ type: "human", content: "talk" }] },
        streamMode: "messages",
      }),
    );
    const names = new Set(parts.map((p) => String(p.event)));
    assert.ok(names.has("messages/metadata"));
    assert.ok(names.has("messages/partial"));
    assert.ok(names.has("messages/complete"));
    const partials = parts.filter((p) => p.event === "messages/partial") as { data: Message[] }[];
    assert.ok(
      partials.some((p) => p.data[0].content === ANSWER),
      "the accumulated partial reaches the full answer",
    );
  });

  it("names subgraph events mode|namespace with stream_subgraphs", async () => {
    const thread = await berth.client.threads.create();
    const parts = await collect(
      berth.client.runs.stream(thread.thread_id, "nested", { input: { log: [] }, streamMode: ["values"], streamSubgraphs: true }),
    );
    const names = parts.map((p) => String(p.event));
    assert.ok(
      names.some((name) => /^values\|child:/.test(name)),
      names.join(","),
    );
    assert.ok(parts.some((p) => p.event === "values"));
  });

  it("streams debug, tasks, checkpoints and events modes", async () => {
    const thread = await berth.client.threads.create();
    const parts = await collect(
      berth.client.runs.stream(thread.thread_id, "agent", {
        input: { messages: [{ type: "human", content: "x" }] },
        streamMode: ["debug", "tasks", "checkpoints", "events"],
      }),
    );
    const names = new Set(parts.map((p) => String(p.event)));
    for (const name of ["debug", "tasks", "checkpoints", "events"]) assert.ok(names.has(name), `missing ${name}`);
  });

  it("a failing run ends with an error event, status error and an errored thread", async () => {
    const thread = await berth.client.threads.create();
    const parts = await collect(berth.client.runs.stream(thread.thread_id, "failing", { input: { reason: "test" } }));
    const error = parts.at(-1)!;
    assert.equal(error.event, "error");
    assert.deepEqual(error.data, { error: "CustomError", message: "Boom: test" });
    const [run] = await berth.client.runs.list(thread.thread_id);
    assert.equal(run.status, "error");
    assert.equal((await berth.client.threads.get(thread.thread_id)).status, "error");
    await assert.rejects(berth.client.runs.wait(thread.thread_id, "failing", { input: { reason: "again" } }), /Boom: again/);
    const raw = await request(berth.url, "POST", `/threads/${thread.thread_id}/runs/wait`, {
      assistant_id: "failing",
      input: { reason: "raw" },
    });
    assert.equal(raw.status, 200);
    assert.deepEqual(raw.body, { __error__: { error: "CustomError", message: "Boom: raw" } });
  });

  it("stops at interrupt(), shows it on the thread, and resumes with a command", async () => {
    const thread = await berth.client.threads.create();
    const interrupted = (await berth.client.runs.wait(thread.thread_id, "hitl", { input: { question: "ok?" } })) as Record<
      string,
      unknown
    >;
    assert.ok("__interrupt__" in interrupted, JSON.stringify(interrupted));
    const paused = await berth.client.threads.get(thread.thread_id);
    assert.equal(paused.status, "interrupted");
    const [pending] = Object.values(paused.interrupts ?? {});
    assert.deepEqual(pending[0].value, { question: "ok?" });
    const state = await berth.client.threads.getState(thread.thread_id);
    assert.deepEqual(state.next, ["ask"]);
    assert.deepEqual(state.tasks[0].interrupts[0].value, { question: "ok?" });
    const [run] = await berth.client.runs.list(thread.thread_id);
    assert.equal(run.status, "interrupted");

    const resumed = (await berth.client.runs.wait(thread.thread_id, "hitl", { command: { resume: "yes" } })) as {
      answer: string;
    };
    assert.equal(resumed.answer, "yes!");
    const finished = await berth.client.threads.get(thread.thread_id);
    assert.equal(finished.status, "idle");
    assert.deepEqual(finished.interrupts, {});
  });

  it("pauses before and after nodes with interrupt_before / interrupt_after", async () => {
    const thread = await berth.client.threads.create();
    await berth.client.runs.wait(thread.thread_id, "hitl", { input: { question: "q" }, interruptBefore: ["ask"] });
    assert.deepEqual((await berth.client.threads.getState(thread.thread_id)).next, ["ask"]);
    assert.equal((await berth.client.threads.get(thread.thread_id)).status, "interrupted");

    const other = await berth.client.threads.create();
    await berth.client.runs.wait(other.thread_id, "slow", { input: { steps: 3, delay_ms: 1 }, interruptAfter: "*" });
    const state = await berth.client.threads.getState<{ done: number }>(other.thread_id);
    assert.equal(state.values.done, 1);
    assert.deepEqual(state.next, ["step"]);
    const continued = (await berth.client.runs.wait(other.thread_id, "slow", { input: null })) as { done: number };
    assert.equal(continued.done, 3);
  });

  it("puts run metadata into checkpoint metadata, so the history filter finds a run's checkpoints", async () => {
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, "plain_js", {
      input: { text: "a" },
      metadata: { tag: "first" },
    });
    await berth.client.runs.join(thread.thread_id, run.run_id);
    await berth.client.runs.wait(thread.thread_id, "plain_js", { input: { text: "b" }, metadata: { tag: "second" } });
    const first = await berth.client.threads.getHistory(thread.thread_id, { metadata: { tag: "first" } });
    assert.ok(first.length > 0);
    assert.ok(first.every((state) => state.metadata?.run_id === run.run_id));
    assert.ok(first.every((state) => state.metadata?.graph_id === "plain_js"));
    const second = await berth.client.threads.getHistory(thread.thread_id, { metadata: { tag: "second" } });
    assert.ok(second.length > 0 && second.every((state) => state.metadata?.run_id !== run.run_id));
  });

  it("merges config assistant < thread < run and passes the run's ids in configurable", async () => {
    const assistant = await berth.client.assistants.create({
      graphId: "factory",
      config: { configurable: { node_name: "from_assistant" } },
    });
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, assistant.assistant_id, {
      input: {},
      config: { configurable: { node_name: "from_run" } },
    });
    await berth.client.runs.join(thread.thread_id, run.run_id);
    const history = await berth.client.threads.getHistory(thread.thread_id);
    const wrote = history.flatMap((state) => Object.keys((state.metadata?.writes as object | null) ?? {}));
    assert.ok(!wrote.includes("from_assistant"));
    const stored = await berth.client.runs.get(thread.thread_id, run.run_id);
    assert.equal(stored.assistant_id, assistant.assistant_id);
    assert.equal(stored.status, "success");
    assert.equal(history[0].metadata?.assistant_id, assistant.assistant_id);
    assert.equal(history[0].metadata?.thread_id, thread.thread_id);
  });

  it("forks from an earlier checkpoint with checkpoint_id", async () => {
    const thread = await berth.client.threads.create();
    await berth.client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "one" }] } });
    const afterFirst = await berth.client.threads.getState(thread.thread_id);
    await berth.client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "two" }] } });
    const forked = (await berth.client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "three" }] },
      checkpointId: afterFirst.checkpoint.checkpoint_id!,
    })) as { messages: Message[] };
    assert.deepEqual(
      forked.messages.map((m) => m.content),
      ["one", "Hello from fixture.env: one", "three", "Hello from fixture.env: three"],
    );
  });

  it("runs statelessly: wait, stream, background and batch, with /runs/{id} locations", async () => {
    const waited = await request(berth.url, "POST", "/runs/wait", { assistant_id: "plain_js", input: { text: "quiet" } });
    assert.equal(waited.status, 200);
    assert.deepEqual(waited.body, { text: "QUIET" });
    assert.match(waited.headers.get("content-location") ?? "", /^\/runs\/[0-9a-f-]{36}$/);
    const parts = await collect(berth.client.runs.stream(null, "plain_js", { input: { text: "s" } }));
    assert.deepEqual(parts.at(-1)!.data, { text: "S" });

    const background = await request(berth.url, "POST", "/runs", { assistant_id: "plain_js", input: { text: "bg" } });
    const run = background.body as { run_id: string; thread_id: string; kwargs: { temporary: boolean } };
    assert.equal(run.kwargs.temporary, true);
    assert.equal(background.headers.get("content-location"), `/runs/${run.run_id}`);

    const batch = await request(berth.url, "POST", "/runs/batch", [
      { assistant_id: "plain_js", input: { text: "1" } },
      { assistant_id: "plain_js", input: { text: "2" } },
    ]);
    assert.equal(batch.status, 200);
    assert.equal((batch.body as unknown[]).length, 2);
  });

  it("keeps a stateless run's thread with on_completion=keep", async () => {
    const response = await request(berth.url, "POST", "/runs/wait", {
      assistant_id: "plain_js",
      input: { text: "kept" },
      on_completion: "keep",
    });
    const threadId = /\/runs\/([0-9a-f-]{36})$/.exec(response.headers.get("content-location") ?? "");
    assert.ok(threadId);
    const threads = await berth.client.threads.search({ values: { text: "KEPT" } });
    assert.equal(threads.length, 1);
  });

  it("creates the thread with if_not_exists=create, and 404s without it", async () => {
    const threadId = crypto.randomUUID();
    const missing = await request(berth.url, "POST", `/threads/${threadId}/runs`, { assistant_id: "agent", input: {} });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { detail: "Thread not found" });
    const values = await berth.client.runs.wait(threadId, "plain_js", { input: { text: "new" }, ifNotExists: "create" });
    assert.deepEqual(values, { text: "NEW" });
    assert.equal((await berth.client.threads.get(threadId)).metadata?.graph_id, "plain_js");
  });

  it("refuses a state update while a run is active (409)", async () => {
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, "slow", { input: { steps: 50, delay_ms: 20 } });
    const busy = await request(berth.url, "POST", `/threads/${thread.thread_id}/state`, { values: { done: 1 } });
    assert.equal(busy.status, 409);
    assert.deepEqual(busy.body, { detail: "Thread is busy" });
    assert.equal((await berth.client.threads.get(thread.thread_id)).status, "busy");
    await berth.client.runs.cancel(thread.thread_id, run.run_id, true);
  });

  it("deletes an ended run, and refuses to delete an active one", async () => {
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, "slow", { input: { steps: 50, delay_ms: 20 } });
    const active = await request(berth.url, "DELETE", `/threads/${thread.thread_id}/runs/${run.run_id}`);
    assert.equal(active.status, 409);
    await berth.client.runs.cancel(thread.thread_id, run.run_id, true);
    await berth.client.runs.delete(thread.thread_id, run.run_id);
    const gone = await request(berth.url, "GET", `/threads/${thread.thread_id}/runs/${run.run_id}`);
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.body, { detail: "Run not found" });
  });
});
