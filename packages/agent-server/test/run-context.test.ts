import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, startBerth } from "@berth/test-support";

describe("LangChain's run context in an untraced run", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "run-context" });
  });
  after(() => berth.stop());

  it("gives nodes their config, context variables down to child runnables, traceable helpers and interrupts", async () => {
    const thread = await berth.client.threads.create();
    const asked = await berth.client.runs.wait(thread.thread_id, "context", {
      input: {},
      config: { configurable: { custom: "mine" } },
    });
    assert.deepEqual((asked as { __interrupt__?: { value: unknown }[] }).__interrupt__?.[0]?.value, "go on?");
    const state = await berth.client.threads.getState<{ seen: string[] }>(thread.thread_id);
    assert.deepEqual(state.values.seen, [
      "same config: true",
      "hello from a child of first",
      "hello while streaming, still hello a step later",
      "traceable sees hello",
      "custom key: mine",
    ]);
    assert.deepEqual(state.next, ["second"]);
    const resumed = await berth.client.runs.wait(thread.thread_id, "context", { command: { resume: "yes" } });
    // A context variable lives in the node that set it (and its children), not in the next node.
    assert.deepEqual((resumed as { seen: string[] }).seen.slice(5), ["asked: yes", "greeting here: undefined"]);
  });
});
