import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ThreadState } from "@langchain/langgraph-sdk";
import { buildTree, parseEdit, timelineRows } from "../../src/studio/time-travel-tree.js";

/** A checkpoint of the history as the server gives it, for the tree's own checks. */
function checkpoint(id: string, parent: string | undefined, step: number, writes?: string): ThreadState {
  return {
    values: {},
    next: [],
    checkpoint: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id, checkpoint_map: null },
    parent_checkpoint: parent ? { thread_id: "t", checkpoint_ns: "", checkpoint_id: parent, checkpoint_map: null } : null,
    metadata: { step, source: "loop", writes: writes ? { [writes]: {} } : null },
    created_at: null,
    tasks: [],
  };
}

describe("the time-travel timeline's tree", () => {
  // a ← b ← c ← d (the first branch), and b ← e ← f (a fork from b, newer): the history comes newest first.
  const history = [
    checkpoint("f", "e", 3, "review"),
    checkpoint("e", "b", 2, "write"),
    checkpoint("d", "c", 3, "review"),
    checkpoint("c", "b", 2, "write"),
    checkpoint("b", "a", 1, "plan"),
    checkpoint("a", undefined, 0),
  ];
  const tree = buildTree(history);
  const shape = (tip: string | undefined, closed: string[] = []) =>
    timelineRows(tree, tip, new Set(closed)).map((row) => `${row.kind === "branch" ? "fork:" : ""}${row.id}@${row.depth}`);

  test("the latest checkpoint's branch is the main line; the other hangs, indented, above its fork point", () => {
    assert.deepEqual(shape(undefined), ["f@0", "e@0", "fork:c@1", "d@1", "c@1", "b@0", "a@0"]);
  });

  test("switching to the other branch makes it the main line", () => {
    assert.deepEqual(shape("d"), ["d@0", "c@0", "fork:e@1", "f@1", "e@1", "b@0", "a@0"]);
  });

  test("a closed branch keeps its head row only", () => {
    assert.deepEqual(shape(undefined, ["c"]), ["f@0", "e@0", "fork:c@1", "b@0", "a@0"]);
  });

  test("a long history is one row per checkpoint, each fork a head row more", () => {
    const long = Array.from({ length: 5000 }, (_, index) => {
      const id = String(index).padStart(5, "0");
      // Every 100th checkpoint forks off the one two before it, leaving a branch of one.
      const parent = index === 0 ? undefined : String(index % 100 === 0 ? index - 2 : index - 1).padStart(5, "0");
      return checkpoint(id, parent, index);
    }).reverse();
    const rows = timelineRows(buildTree(long), undefined, new Set());
    assert.equal(rows.filter((row) => row.kind === "checkpoint").length, 5000);
    assert.equal(rows.filter((row) => row.kind === "branch").length, 49);
  });

  test("an edit sends only the keys that changed, and refuses what is not a JSON object", () => {
    assert.deepEqual(parseEdit('{"a": 1, "b": [2]}', { a: 1, b: [1] }), { ok: true, values: { b: [2] } });
    assert.equal(parseEdit('{"a": 1}', { a: 1 }).ok, false);
    assert.equal(parseEdit("[1]", {}).ok, false);
    const broken = parseEdit("{not json", {});
    assert.ok(!broken.ok && broken.error.startsWith("The state is not valid JSON"));
  });
});
