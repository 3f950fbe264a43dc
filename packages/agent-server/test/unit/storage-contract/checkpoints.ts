// Checkpoints written by many runs at once (which PostgreSQL sends together)
// read back as if each run had written alone.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Annotation, Command, INTERRUPT, interrupt, StateGraph } from "@langchain/langgraph";
import { type CheckpointMetadata, emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import type { Storage } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { newThread } from "./fixtures.js";

const State = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

/** Two nodes, the second asking for input in a thread's first run when told to. */
async function graphOf(storage: Storage) {
  return new StateGraph(State)
    .addNode("a", (state) => ({ log: [`a${state.log.length}`] }))
    .addNode("b", (state) => ({ log: [state.log.length === 2 && state.log[0] === "ask" ? `b:${interrupt("ready?")}` : "b"] }))
    .addEdge("__start__", "a")
    .addEdge("a", "b")
    .compile({ checkpointer: await storage.checkpointer() });
}

const meta = (step: number) => ({ source: "loop", step, parents: {} }) as CheckpointMetadata;

export function checkpointsContract(backend: Backend): void {
  describe("checkpoints written concurrently", () => {
    const test = databasePerTest(backend);

    it("twenty graphs at once each leave the state and history of running alone", async () => {
      const { storage } = test;
      const graph = await graphOf(storage);
      const configOf = (threadId: string) => ({ configurable: { thread_id: threadId } });
      const asks = (i: number) => i % 4 === 0;
      /** Three invokes, the first asking for input (and resumed) when `ask`. */
      const scenario = async (threadId: string, ask: boolean) => {
        await graph.invoke({ log: [ask ? "ask" : "go"] }, configOf(threadId));
        if (ask) await graph.invoke(new Command({ resume: "yes" }), configOf(threadId));
        await graph.invoke({ log: ["again"] }, configOf(threadId));
      };
      const history = async (threadId: string) => {
        const snapshots = [];
        for await (const snapshot of graph.getStateHistory(configOf(threadId))) {
          const { step, source } = snapshot.metadata ?? {};
          const interrupts = snapshot.tasks.flatMap((task) => task.interrupts.map((pending) => pending.value));
          snapshots.push({ step, source, next: snapshot.next, log: snapshot.values.log, interrupts });
        }
        return snapshots;
      };

      const threads = await Promise.all(Array.from({ length: 20 }, () => newThread(storage)));
      await Promise.all(threads.map((threadId, i) => scenario(threadId, asks(i))));
      const [aloneAsking, alone] = [await newThread(storage), await newThread(storage)];
      await scenario(aloneAsking, true);
      await scenario(alone, false);

      const expected = { asking: await history(aloneAsking), other: await history(alone) };
      assert.deepEqual(expected.asking[0]?.log, ["ask", "a1", "b:yes", "again", "a4", "b"]);
      assert.ok(
        expected.asking.some((snapshot) => snapshot.interrupts.includes("ready?")),
        "an interrupt in its history",
      );
      for (const [i, threadId] of threads.entries()) {
        assert.deepEqual(await history(threadId), asks(i) ? expected.asking : expected.other, `thread ${i}`);
      }
    });

    it("a checkpoint put twice at once keeps the second; writes of one task keep the first, special ones the last", async () => {
      const { storage } = test;
      const saver = await storage.checkpointer();
      const threadId = await newThread(storage);
      const address = { configurable: { thread_id: threadId, checkpoint_ns: "" } };
      const id = uuid6(0);
      const first = { ...emptyCheckpoint(), id, channel_values: { x: "first" }, channel_versions: { x: "1.a" } };
      const second = { ...emptyCheckpoint(), id, channel_values: { x: "second" }, channel_versions: { x: "2.a" } };
      const at = { configurable: { ...address.configurable, checkpoint_id: id } };
      // Issued in one turn: PostgreSQL sends them in one statement.
      await Promise.all([
        saver.put(address, first, meta(0), { x: "1.a" }),
        saver.put(address, second, meta(1), { x: "2.a" }),
        saver.putWrites(at, [["x", "kept"]], "task-1"),
        saver.putWrites(at, [["x", "dropped"]], "task-1"),
        saver.putWrites(at, [[INTERRUPT, "first ask"]], "task-2"),
        saver.putWrites(at, [[INTERRUPT, "last ask"]], "task-2"),
      ]);
      const tuple = await saver.getTuple(address);
      assert.equal(tuple?.checkpoint.id, id);
      assert.deepEqual(tuple?.checkpoint.channel_values, { x: "second" });
      assert.equal(tuple?.metadata?.step, 1);
      assert.deepEqual(tuple?.pendingWrites?.map(([task, channel, value]) => [task, channel, value]).sort(), [
        ["task-1", "x", "kept"],
        ["task-2", INTERRUPT, "last ask"],
      ]);
    });
  });
}
