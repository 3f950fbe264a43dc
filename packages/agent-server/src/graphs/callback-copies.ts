import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { CallbackManager } from "@langchain/core/callbacks/manager";

/*
 * A call with callbacks (a tracer, the `messages` stream mode's handler) copies its callback manager for each runnable
 * it calls: LangGraph's config of every node, edge and channel write, LangChain's configure of every model and tool
 * call. LangChain's `copy` adds the metadata one key at a time, each time spreading the whole object again and
 * searching the inheritable keys: quadratic in the keys, and a run's metadata has a dozen or more (the platform's, the
 * configurable's, each step's). That was a third of what tracing cost a tool-calling run. The copy below makes the
 * same manager — handlers, tags and metadata in the same order, a key inheritable when it was — in one pass over
 * the metadata.
 */

type Copy = CallbackManager["copy"];

let installed = false;

/** Installs the one-pass copy into Berth's copy of LangChain (the one graphs are pinned to). */
export function copyCallbackManagersInOnePass(): void {
  if (installed) return;
  installed = true;
  CallbackManager.prototype.copy = onePassCopy;
}

const onePassCopy: Copy = function (this: CallbackManager, additionalHandlers: BaseCallbackHandler[] = [], inherit = true) {
  const manager = new CallbackManager(this._parentRunId);
  for (const handler of this.handlers) manager.addHandler(handler, this.inheritableHandlers.includes(handler));
  for (const tag of this.tags) manager.addTags([tag], this.inheritableTags.includes(tag));
  // A spread makes own properties, as LangChain's spreads did (a "__proto__" key stays a key).
  const metadata = { ...this.metadata };
  const inheritableMetadata: Record<string, unknown> = {};
  for (const key of Object.keys(metadata)) {
    if (!Object.hasOwn(this.inheritableMetadata, key)) continue;
    if (key === "__proto__")
      Object.defineProperty(inheritableMetadata, key, {
        value: metadata[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else inheritableMetadata[key] = metadata[key];
  }
  manager.metadata = metadata;
  manager.inheritableMetadata = inheritableMetadata;
  for (const handler of additionalHandlers) {
    // LangChain's rule: a console handler is not added twice.
    const consoleHandlers = manager.handlers.filter((h) => h.name === "console_callback_handler");
    if (consoleHandlers.some((h) => h.name === handler.name)) continue;
    manager.addHandler(handler, inherit);
  }
  return manager;
};
