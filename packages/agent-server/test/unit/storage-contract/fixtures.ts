// Values the storage contract tests build their calls from.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { NewRun, Storage } from "../../../src/storage/types.js";

/** How both backends return timestamps. */
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A run of `threadId` with the defaults the run service would give it. */
export function newRun(threadId: string, overrides: Partial<NewRun> = {}): NewRun {
  return {
    run_id: randomUUID(),
    thread_id: threadId,
    assistant_id: "assistant-1",
    graph_id: "graph-1",
    metadata: {},
    multitask_strategy: "enqueue",
    kwargs: {
      input: { messages: [] },
      command: null,
      config: {},
      context: {},
      stream_mode: ["values"],
      stream_subgraphs: false,
      stream_resumable: false,
      interrupt_before: null,
      interrupt_after: null,
      checkpoint: null,
      webhook: null,
      feedback_keys: null,
      on_disconnect: "continue",
      on_completion: "keep",
      temporary: false,
      durability: null,
    },
    available_at: Date.now(),
    create_thread: false,
    ...overrides,
  };
}

/** A new thread's id. */
export async function newThread(storage: Storage): Promise<string> {
  const threadId = randomUUID();
  assert.ok(await storage.threads.create({ thread_id: threadId, metadata: {} }));
  return threadId;
}

/** Creates a run and returns its id (failing the test when it is not created). */
export async function createdRun(storage: Storage, threadId: string, overrides: Partial<NewRun> = {}): Promise<string> {
  const result = await storage.runs.create(newRun(threadId, overrides));
  assert.equal(result.kind, "created");
  return result.kind === "created" ? result.run.run_id : "";
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once the clock is past `at` (epoch ms), so a lease that ends by
 * `at` has lapsed, however slow the machine: both backends compare leases
 * with this process's clock.
 */
export async function clockPast(at: number): Promise<void> {
  while (Date.now() <= at) await sleep(1);
}
