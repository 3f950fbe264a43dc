import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { type Api, api, type ControlPlane, startControlPlane } from "@berth/test-support";
import { type BerthProcess, request, startBerth } from "@berth/test-support";
import { collect } from "./helpers/streams.js";
import { streamRun, tracingEnv } from "./helpers/tracing.js";

// The tracing service's read API (docs/tracing.md), as far as these tests read it.

interface TracedRun {
  id: string;
  trace_id: string;
  parent_run_id: string | null;
  name: string | null;
  run_type: string | null;
  status: string;
  thread_id: string | null;
  end_time: string | null;
  extra: { metadata?: Record<string, unknown> };
  child_runs: TracedRun[];
}

interface Feedback {
  run_id: string;
  key: string;
  score: number | null;
  value: unknown;
  comment: string | null;
  correction: unknown;
  metadata: Record<string, unknown> | null;
}

async function read<T>(reader: Api, path: string): Promise<T> {
  const response = await reader.get<T>(path);
  assert.equal(response.status, 200, `GET ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

const tree = (reader: Api, runId: string) => read<TracedRun>(reader, `/api/v1/runs/${runId}/tree`);
const projectRuns = async (reader: Api, project: string, query: string) =>
  (await read<{ resources: TracedRun[] }>(reader, `/api/v1/projects/${project}/runs?${query}`)).resources;
const feedbackOf = async (reader: Api, runId: string) =>
  (await read<{ resources: Feedback[] }>(reader, `/api/v1/runs/${runId}/feedback`)).resources;

function flatten(run: TracedRun): TracedRun[] {
  return [run, ...run.child_runs.flatMap(flatten)];
}

/** The traced runs of one run of the `nested` fixture: the graph, its nodes, and the subgraph with its own nodes. */
const NESTED_TREE = ["LangGraph", "__start__", "child", "LangGraph", "__start__", "inner_step", "after"];
/** The traced runs of one run of the `chat` fixture: the graph, its nodes, and a chat model call in each node. */
const CHAT_TREE = ["LangGraph", "__start__", "model", "FakeListChatModel", "summary", "FakeListChatModel"];

const NESTED_ASSISTANT = "0813419b-f0e6-579e-bdee-18d9fdf48632";

/** Every traced run of a Berth run carries the run's ids, the root is the run itself. */
function assertRunTrace(
  root: TracedRun,
  ids: { run_id: string; thread_id: string; graph_id: string; assistant_id: string },
  names: string[] = NESTED_TREE,
) {
  assert.equal(root.id, ids.run_id, "the root traced run is the Berth run");
  assert.equal(root.parent_run_id, null);
  assert.equal(root.status, "success");
  assert.ok(root.end_time, "the root run ended");
  const runs = flatten(root);
  assert.deepEqual(runs.map((run) => run.name).sort(), [...names].sort());
  for (const run of runs) {
    assert.equal(run.trace_id, ids.run_id, `${run.name} is in the run's trace`);
    assert.equal(run.thread_id, ids.thread_id, `${run.name} is filed under the thread`);
    const metadata = run.extra.metadata ?? {};
    for (const [key, value] of Object.entries(ids)) assert.equal(metadata[key], value, `${run.name} carries ${key}`);
  }
}

describe("tracing: each run is a trace rooted at its run_id, every traced run carrying the run's ids", () => {
  let cp: ControlPlane;
  let berth: BerthProcess;
  let reader: Api;
  const project = `traces-${randomUUID().slice(0, 8)}`;

  before(async () => {
    cp = await startControlPlane();
    // Read as the agent server writes: with the key only, into the key's workspace.
    reader = api(cp.url, cp.adminKey);
    berth = await startBerth({ env: tracingEnv(`${cp.url}/api/v1`, cp.adminKey, project) });
  });
  after(async () => {
    await berth?.stop();
    await cp?.stop();
  });

  it("thread runs of a graph with a subgraph, a stateless run calling models: whole trees, ids on every run, filed by thread", async () => {
    const thread = await berth.client.threads.create();
    for (const text of ["one", "two"]) {
      await berth.client.runs.wait(thread.thread_id, "nested", { input: { log: [] }, metadata: { turn: text } });
    }
    const threadRuns = await berth.client.runs.list(thread.thread_id);
    assert.equal(threadRuns.length, 2);
    const stateless = await streamRun(berth.url, "/runs/stream", {
      assistant_id: "chat",
      input: { messages: [{ type: "human", content: "hi" }] },
      stream_mode: ["events"],
    });
    const statelessIds = stateless[0].data as { run_id: string; thread_id: string };
    const chat = await berth.client.assistants.get("chat");

    // The traces go out in background batches, and a stopping process sends those it still holds before it
    // exits: once it has stopped, every trace is in (no polling of the read API).
    await berth.stop();
    assert.doesNotMatch(berth.output(), /pending traces not sent/);

    for (const run of threadRuns) {
      assertRunTrace(await tree(reader, run.run_id), {
        run_id: run.run_id,
        thread_id: thread.thread_id,
        graph_id: "nested",
        assistant_id: NESTED_ASSISTANT,
      });
      assert.equal((await tree(reader, run.run_id)).extra.metadata?.turn, run.metadata?.turn, "the run's own metadata is traced");
    }
    // A stateless run is traced under its temporary thread; its model calls are child runs like any other.
    const statelessTree = await tree(reader, statelessIds.run_id);
    assertRunTrace(
      statelessTree,
      { run_id: statelessIds.run_id, thread_id: statelessIds.thread_id, graph_id: "chat", assistant_id: chat.assistant_id },
      CHAT_TREE,
    );
    assert.deepEqual(
      flatten(statelessTree)
        .filter((run) => run.name === "FakeListChatModel")
        .map((run) => run.run_type),
      ["llm", "llm"],
    );

    const ofThread = await projectRuns(reader, project, `thread_id=${thread.thread_id}`);
    assert.equal(ofThread.length, 2 * NESTED_TREE.length, "every traced run of both runs is found by thread");
    const roots = await projectRuns(reader, project, `thread_id=${thread.thread_id}&root_only=true`);
    assert.deepEqual(roots.map((run) => run.id).sort(), threadRuns.map((run) => run.run_id).sort());
  });
});

describe("tracing: feedback URLs", () => {
  let cp: ControlPlane;
  let berth: BerthProcess;
  let reader: Api;

  before(async () => {
    cp = await startControlPlane();
    reader = api(cp.url, cp.adminKey);
    berth = await startBerth({ env: tracingEnv(`${cp.url}/api/v1`, cp.adminKey, `feedback-${randomUUID().slice(0, 8)}`) });
  });
  after(async () => {
    await berth?.stop();
    await cp?.stop();
  });

  it("a stateless run and a failed run get their URLs too (before the error, which stays last)", async () => {
    const stateless = await streamRun(berth.url, "/runs/stream", {
      assistant_id: "agent",
      input: { messages: [] },
      feedback_keys: ["k"],
    });
    assert.equal(stateless.at(-1)!.event, "feedback");
    assert.deepEqual(Object.keys(stateless.at(-1)!.data as object), ["k"]);

    const failed = await streamRun(berth.url, "/runs/stream", { assistant_id: "failing", input: {}, feedback_keys: ["k"] });
    assert.deepEqual(
      failed.slice(-2).map((event) => event.event),
      ["feedback", "error"],
    );

    const info = (await request(berth.url, "GET", "/info")).body as { flags: { langsmith: boolean } };
    assert.equal(info.flags.langsmith, true);
  });

  it("feedback_keys: a feedback event ends the stream, the run keeps the URLs, and plain fetch by POST and GET records feedback on the run", async () => {
    const thread = await berth.client.threads.create();
    const events = await streamRun(berth.url, `/threads/${thread.thread_id}/runs/stream`, {
      assistant_id: "nested",
      input: { log: [] },
      stream_mode: ["values"],
      feedback_keys: ["thumbs", "rating"],
    });
    const runId = (events[0].data as { run_id: string }).run_id;
    assert.deepEqual(
      events.map((event) => event.event),
      ["metadata", "values", "values", "values", "feedback"],
    );
    const urls = events.at(-1)!.data as Record<string, string>;
    assert.deepEqual(Object.keys(urls).sort(), ["rating", "thumbs"]);
    for (const url of Object.values(urls)) assert.ok(url.startsWith(`${cp.url}/api/v1/feedback/tokens/`), url);
    assert.notEqual(urls.thumbs, urls.rating);

    const run = (await request(berth.url, "GET", `/threads/${thread.thread_id}/runs/${runId}`)).body as {
      kwargs: Record<string, unknown>;
    };
    assert.deepEqual(run.kwargs.feedback_urls, urls, "the run keeps its URLs");
    assert.deepEqual(run.kwargs.feedback_keys, ["thumbs", "rating"]);
    // The event is in the run's log: a join from the start replays it.
    const joined = await collect(berth.client.runs.joinStream(thread.thread_id, runId, { lastEventId: "-1" }));
    assert.deepEqual(joined.at(-1), { id: events.at(-1)!.id, event: "feedback", data: urls });

    // No credential: the URL is the authorization.
    const posted = await fetch(urls.thumbs, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ score: 1, comment: "helpful", correction: { log: ["better"] }, metadata: { from: "test" } }),
    });
    assert.equal(posted.status, 200, await posted.clone().text());
    const query = new URLSearchParams({ score: "0.5", value: JSON.stringify({ stars: 4 }), comment: "fine" });
    const got = await fetch(`${urls.rating}?${query}`);
    assert.equal(got.status, 200, await got.clone().text());

    // The tracing service lists feedback of runs it has received; the process sends the traces it still holds
    // before it exits, so once it has stopped the run is in (no polling of the read API).
    await berth.stop();
    const feedback = await feedbackOf(reader, runId);
    const byKey = Object.fromEntries(feedback.map((entry) => [entry.key, entry]));
    assert.deepEqual(Object.keys(byKey).sort(), ["rating", "thumbs"]);
    assert.ok(
      feedback.every((entry) => entry.run_id === runId),
      "feedback is on the run's trace",
    );
    assert.equal(byKey.thumbs.score, 1);
    assert.equal(byKey.thumbs.comment, "helpful");
    assert.deepEqual(byKey.thumbs.correction, { log: ["better"] });
    assert.deepEqual(byKey.thumbs.metadata, { from: "test" });
    assert.equal(byKey.rating.score, 0.5);
    assert.deepEqual(byKey.rating.value, { stars: 4 });
    assert.equal(byKey.rating.comment, "fine");
  });
});
