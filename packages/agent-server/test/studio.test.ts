import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, startBerth } from "@berth/test-support";

/** What LangGraph Studio relies on: forking state, debug events with checkpoints, drawings with subgraphs. */

type Dict = Record<string, unknown>;

interface DebugEvent {
  event: string;
  data: { type: string; step: number; timestamp: string; payload: Dict };
}

interface CheckpointRef {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
  checkpoint_map: Record<string, string> | null;
}

const CHECKPOINT_PAYLOAD_KEYS = [
  "checkpoint",
  "config",
  "metadata",
  "next",
  "parent_checkpoint",
  "parent_config",
  "tasks",
  "values",
].sort();

describe("LangGraph Studio", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "studio" });
  });
  after(() => berth.stop());

  /** A plain_js thread with three checkpoints: text "a", "b", "c". */
  async function threadWithHistory() {
    return berth.client.threads.create({
      graphId: "plain_js",
      supersteps: ["a", "b", "c"].map((text) => ({ updates: [{ values: { text }, asNode: "shout" }] })),
    });
  }

  async function debugEvents(graph: string, streamSubgraphs: boolean): Promise<{ threadId: string; events: DebugEvent[] }> {
    const thread = await berth.client.threads.create();
    const events: DebugEvent[] = [];
    for await (const part of berth.client.runs.stream(thread.thread_id, graph, {
      input: { log: [] },
      streamMode: ["debug"],
      streamSubgraphs,
    })) {
      if (part.event.startsWith("debug")) events.push(part as unknown as DebugEvent);
    }
    return { threadId: thread.thread_id, events };
  }

  describe("forking with as_node __copy__", () => {
    it("copies the latest checkpoint into a new one beside it, with the same values", async () => {
      const thread = await threadWithHistory();
      const latest = await berth.client.threads.getState<{ text: string }>(thread.thread_id);
      const written = await berth.client.threads.updateState(thread.thread_id, { values: null, asNode: "__copy__" });
      const copy = await berth.client.threads.getState<{ text: string }>(thread.thread_id);
      assert.equal(written.configurable?.checkpoint_id, copy.checkpoint.checkpoint_id);
      assert.notEqual(copy.checkpoint.checkpoint_id, latest.checkpoint.checkpoint_id);
      assert.deepEqual(copy.values, { text: "c" });
      assert.equal(copy.metadata?.source, "fork");
      assert.equal(copy.metadata?.step, (latest.metadata?.step as number) + 1);
      // A fork is a sibling of the checkpoint it copies: both have the same parent.
      assert.equal(copy.parent_checkpoint?.checkpoint_id, latest.parent_checkpoint?.checkpoint_id);
      assert.equal((await berth.client.threads.getHistory(thread.thread_id)).length, 4);
    });

    it("forks an older checkpoint, which becomes the thread's state", async () => {
      const thread = await threadWithHistory();
      const history = await berth.client.threads.getHistory<{ text: string }>(thread.thread_id);
      const atB = history.find((state) => state.values.text === "b")!;
      await berth.client.threads.updateState(thread.thread_id, {
        values: null,
        asNode: "__copy__",
        checkpoint: atB.checkpoint,
      });
      const fork = await berth.client.threads.getState<{ text: string }>(thread.thread_id);
      assert.deepEqual(fork.values, { text: "b" });
      assert.equal(fork.metadata?.source, "fork");
      assert.equal(fork.parent_checkpoint?.checkpoint_id, atB.parent_checkpoint?.checkpoint_id);
      assert.deepEqual((await berth.client.threads.get(thread.thread_id)).values, { text: "b" });
      // The copied checkpoint is still there, unchanged.
      const original = await berth.client.threads.getState<{ text: string }>(thread.thread_id, atB.checkpoint.checkpoint_id!);
      assert.deepEqual(original.values, { text: "b" });
    });

    it("a run continues from the fork", async () => {
      const thread = await threadWithHistory();
      await berth.client.threads.updateState(thread.thread_id, { values: null, asNode: "__copy__" });
      const fork = await berth.client.threads.getState(thread.thread_id);
      await berth.client.runs.wait(thread.thread_id, "plain_js", { input: { text: "again" } });
      const state = await berth.client.threads.getState<{ text: string }>(thread.thread_id);
      assert.deepEqual(state.values, { text: "AGAIN" });
      const history = await berth.client.threads.getHistory(thread.thread_id, { limit: 10 });
      assert.ok(history.some((s) => s.parent_checkpoint?.checkpoint_id === fork.checkpoint.checkpoint_id));
    });

    it("a thread with no checkpoint has nothing to copy: 422", async () => {
      const thread = await berth.client.threads.create({ graphId: "plain_js" });
      const response = await request(berth.url, "POST", `/threads/${thread.thread_id}/state`, { as_node: "__copy__" });
      assert.equal(response.status, 422);
      assert.match(JSON.stringify(response.body), /Cannot copy a non-existent checkpoint/);
    });
  });

  describe("debug stream events", () => {
    it("checkpoint events carry checkpoint refs that chain, and match the thread's history", async () => {
      const { threadId, events } = await debugEvents("deep", false);
      const checkpoints = events.filter((event) => event.data.type === "checkpoint").map((event) => event.data.payload);
      assert.ok(checkpoints.length >= 3);
      for (const payload of checkpoints) {
        assert.deepEqual(Object.keys(payload).sort(), CHECKPOINT_PAYLOAD_KEYS);
        const ref = payload.checkpoint as CheckpointRef;
        assert.deepEqual(Object.keys(ref).sort(), ["checkpoint_id", "checkpoint_map", "checkpoint_ns", "thread_id"]);
        assert.equal(ref.thread_id, threadId);
        assert.equal(ref.checkpoint_ns, "");
        assert.equal(ref.checkpoint_map, null);
        const configurable = (payload.config as { configurable: Dict }).configurable;
        assert.equal(configurable.checkpoint_id, ref.checkpoint_id);
        assert.ok(
          Object.keys(configurable).every((key) => !key.startsWith("__")),
          "no LangGraph internals",
        );
        assert.ok(Array.isArray(payload.next) && Array.isArray(payload.tasks));
        assert.equal(typeof (payload.metadata as Dict).step, "number");
      }
      assert.equal(checkpoints[0].parent_checkpoint, null);
      assert.equal(checkpoints[0].parent_config, null);
      for (let i = 1; i < checkpoints.length; i++) {
        const parent = checkpoints[i].parent_checkpoint as CheckpointRef;
        assert.equal(parent.checkpoint_id, (checkpoints[i - 1].checkpoint as CheckpointRef).checkpoint_id);
      }
      const last = checkpoints.at(-1)!;
      assert.deepEqual(last.values, { log: ["leaf_a", "leaf_b", "tail", "after"] });
      const state = await berth.client.threads.getState(threadId);
      assert.deepEqual(last.checkpoint, state.checkpoint);
      const history = await berth.client.threads.getHistory(threadId, { limit: 20 });
      assert.deepEqual(
        history.map((s) => s.checkpoint.checkpoint_id).reverse(),
        checkpoints.map((payload) => (payload.checkpoint as CheckpointRef).checkpoint_id),
      );
    });

    it("a subgraph task is shown by its checkpoint ref, and task results by id", async () => {
      const { threadId, events } = await debugEvents("deep", false);
      const scheduling = events.find(
        (event) => event.data.type === "checkpoint" && (event.data.payload.next as string[]).includes("child"),
      )!;
      const [task] = scheduling.data.payload.tasks as Dict[];
      assert.equal(task.name, "child");
      assert.equal("state" in task, false);
      assert.deepEqual(task.checkpoint, {
        thread_id: threadId,
        checkpoint_ns: `child:${task.id}`,
        checkpoint_id: null,
        checkpoint_map: null,
      });
      const result = events.find((event) => event.data.type === "task_result" && event.data.payload.id === task.id)!;
      assert.deepEqual(result.data.payload, {
        id: task.id,
        name: "child",
        result: { log: ["leaf_a", "leaf_b", "tail"] },
        interrupts: [],
        error: null,
      });
      assert.equal(result.data.step, scheduling.data.step + 1);
      assert.match(result.data.timestamp, /^\d{4}-\d\d-\d\dT/);
    });

    it("with stream_subgraphs, a subgraph's checkpoints sit in its namespace with a checkpoint_map to the parent", async () => {
      const { threadId, events } = await debugEvents("interrupting", true);
      const root = events.filter((event) => event.event === "debug" && event.data.type === "checkpoint");
      const scheduling = root.find((event) => (event.data.payload.next as string[]).includes("asking"))!;
      const parentId = (scheduling.data.payload.checkpoint as CheckpointRef).checkpoint_id;
      const [task] = scheduling.data.payload.tasks as Dict[];
      const namespace = `asking:${task.id}`;
      const inner = events.filter((event) => event.event === `debug|${namespace}` && event.data.type === "checkpoint");
      assert.ok(inner.length >= 2);
      for (const event of inner) {
        const ref = event.data.payload.checkpoint as CheckpointRef;
        assert.equal(ref.thread_id, threadId);
        assert.equal(ref.checkpoint_ns, namespace);
        assert.deepEqual(ref.checkpoint_map, { "": parentId });
      }
      assert.deepEqual(
        (inner[1].data.payload.parent_checkpoint as CheckpointRef).checkpoint_id,
        (inner[0].data.payload.checkpoint as CheckpointRef).checkpoint_id,
      );
      const interrupted = events.find(
        (event) => event.event === `debug|${namespace}` && event.data.type === "task_result" && event.data.payload.name === "ask",
      )!;
      assert.deepEqual(
        (interrupted.data.payload.interrupts as Dict[]).map((i) => i.value),
        ["approve?"],
      );
      // The subgraph's state is reachable through the ref the task carried.
      const state = await berth.client.threads.getState(threadId, undefined, { subgraphs: true });
      assert.equal(state.tasks[0].state?.checkpoint.checkpoint_ns, namespace);
    });

    it("a subgraph's state in its task has the reference's keys: no flat checkpoint ids, which the top level keeps", async () => {
      const { threadId } = await debugEvents("interrupting", false);
      const response = await request(berth.url, "GET", `/threads/${threadId}/state?subgraphs=true`);
      const state = response.body as Dict & { tasks: { state: Dict | null }[] };
      assert.ok(state.tasks[0]?.state, JSON.stringify(state));
      assert.deepEqual(Object.keys(state.tasks[0].state).sort(), [
        "checkpoint",
        "created_at",
        "metadata",
        "next",
        "parent_checkpoint",
        "tasks",
        "values",
      ]);
      assert.equal(state.checkpoint_id, (state.checkpoint as CheckpointRef).checkpoint_id);
      assert.equal(state.parent_checkpoint_id, (state.parent_checkpoint as CheckpointRef).checkpoint_id);
    });
  });

  describe("drawing and subgraphs", () => {
    const ids = (nodes: { id: string | number }[]) => nodes.map((node) => String(node.id));

    it("draws the graph without subgraphs by default", async () => {
      const drawing = await berth.client.assistants.getGraph("deep");
      assert.deepEqual(ids(drawing.nodes), ["__start__", "child", "after", "__end__"]);
    });

    it("xray=true draws every level of subgraphs, with parent:child ids", async () => {
      const drawing = await berth.client.assistants.getGraph("deep", { xray: true });
      assert.deepEqual(ids(drawing.nodes), [
        "__start__",
        "child:grandchild:leaf_a",
        "child:grandchild:leaf_b",
        "child:tail",
        "after",
        "__end__",
      ]);
      assert.deepEqual(drawing.edges.map((edge) => `${edge.source}>${edge.target}`).sort(), [
        "__start__>child:grandchild:leaf_a",
        "after>__end__",
        "child:grandchild:leaf_a>child:grandchild:leaf_b",
        "child:grandchild:leaf_b>child:tail",
        "child:tail>after",
      ]);
    });

    it("xray=N draws N levels", async () => {
      const one = await berth.client.assistants.getGraph("deep", { xray: 1 });
      assert.deepEqual(ids(one.nodes), ["__start__", "child:grandchild", "child:tail", "after", "__end__"]);
      const two = await berth.client.assistants.getGraph("deep", { xray: 2 });
      assert.ok(ids(two.nodes).includes("child:grandchild:leaf_b"));
      const zero = await request(berth.url, "GET", "/assistants/deep/graph?xray=0");
      assert.deepEqual(ids((zero.body as { nodes: { id: string }[] }).nodes), ["__start__", "child", "after", "__end__"]);
    });

    it("a subgraph of one node is drawn as that node, as LangGraph draws it", async () => {
      const drawing = await berth.client.assistants.getGraph("nested", { xray: true });
      assert.deepEqual(ids(drawing.nodes), ["__start__", "child", "after", "__end__"]);
    });

    it("lists nested namespaces with recurse", async () => {
      assert.deepEqual(Object.keys(await berth.client.assistants.getSubgraphs("deep")), ["child"]);
      const all = await berth.client.assistants.getSubgraphs("deep", { recurse: true });
      assert.deepEqual(Object.keys(all), ["child", "child|grandchild"]);
      const schema = all["child|grandchild"] as { state_schema?: { properties?: Dict } };
      assert.ok(schema.state_schema?.properties && "log" in schema.state_schema.properties);
      // A namespace names one subgraph, nested ones included.
      const nested = await berth.client.assistants.getSubgraphs("deep", { namespace: "child|grandchild", recurse: true });
      assert.deepEqual(Object.keys(nested), ["child|grandchild"]);
    });
  });
});
