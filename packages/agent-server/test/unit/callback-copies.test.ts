import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { CallbackManager } from "@langchain/core/callbacks/manager";
import { copyCallbackManagersInOnePass } from "../../src/graphs/callback-copies.js";

class NamedHandler extends BaseCallbackHandler {
  constructor(readonly name: string) {
    super();
  }
}

/** LangChain's own copy, kept before Berth's replaces it: the reference the one-pass copy must match. */
const langChainCopy = CallbackManager.prototype.copy;
copyCallbackManagersInOnePass();

/** Everything a copy carries, with the metadata's key order (the spreads keep insertion order). */
function contents(manager: CallbackManager) {
  return {
    parentRunId: manager.getParentRunId(),
    handlers: manager.handlers.map((handler) => handler.name),
    inheritableHandlers: manager.inheritableHandlers.map((handler) => handler.name),
    tags: manager.tags,
    inheritableTags: manager.inheritableTags,
    metadataKeys: Object.keys(manager.metadata),
    metadata: manager.metadata,
    inheritableMetadataKeys: Object.keys(manager.inheritableMetadata),
    inheritableMetadata: manager.inheritableMetadata,
  };
}

function sampleManager(): CallbackManager {
  const manager = new CallbackManager("parent-run");
  manager.addHandler(new NamedHandler("inherited"), true);
  manager.addHandler(new NamedHandler("local"), false);
  manager.addHandler(new NamedHandler("console_callback_handler"), true);
  manager.addTags(["graph:step:1", "shared"], true);
  manager.addTags(["local-tag"], false);
  manager.addMetadata({ thread_id: "t1", run_id: "r1", langgraph_step: 1, nested: { a: [1, 2] } }, true);
  manager.addMetadata({ local_only: "x", langgraph_step: 2 }, false);
  manager.addMetadata(JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>, true);
  // A key only the inheritable metadata has (removed from the local one): a copy drops it.
  manager.inheritableMetadata = { ...manager.inheritableMetadata, inheritable_only: true };
  return manager;
}

describe("a callback manager's one-pass copy", () => {
  test("is what LangChain's copy makes, with and without more handlers", () => {
    assert.notEqual(CallbackManager.prototype.copy, langChainCopy, "the one-pass copy is installed");
    const cases: [BaseCallbackHandler[], boolean][] = [
      [[], true],
      [[new NamedHandler("added")], true],
      [[new NamedHandler("added")], false],
      [[new NamedHandler("console_callback_handler"), new NamedHandler("other")], true],
    ];
    for (const [additional, inherit] of cases) {
      const source = sampleManager();
      const expected = langChainCopy.call(source, additional, inherit);
      const copied = source.copy(additional, inherit);
      assert.deepEqual(contents(copied), contents(expected));
      assert.equal(Object.getPrototypeOf(copied.metadata), Object.prototype);
      assert.ok(Object.hasOwn(copied.metadata, "__proto__"));
    }
  });

  test("leaves the source unchanged and shares no mutable part with it", () => {
    const source = sampleManager();
    const before = contents(source);
    const copied = source.copy();
    copied.addMetadata({ later: 1 });
    copied.addTags(["later"]);
    copied.addHandler(new NamedHandler("later"));
    assert.deepEqual(contents(source), before);
  });

  test("of a manager with no metadata, tags or handlers is empty", () => {
    const copied = new CallbackManager().copy();
    assert.deepEqual(contents(copied), contents(langChainCopy.call(new CallbackManager(), [], true)));
  });
});
