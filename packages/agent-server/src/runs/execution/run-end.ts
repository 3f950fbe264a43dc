import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { Logger } from "pino";
import type { JsonObject, QueuedRun, RunEnd, RunLease, RunThread, StoredEvent, ThreadStateSummary } from "../../storage/types.js";
import type { FeedbackUrls } from "../../tracing/feedback.js";
import { toWire } from "../../wire/serialize.js";
import { summarizeState, toThreadState } from "../../wire/thread-state.js";
import type { RunEndNotice } from "../brokers/broker.js";
import type { ExecutorDeps } from "./executor-deps.js";
import type { AbortReason } from "./run-control.js";
import { type RunError, runError } from "./run-salvage.js";
import { webhookDelivery } from "../webhooks/payload.js";

export type Outcome =
  | { kind: "completed"; lastValues: unknown }
  | { kind: "failed"; error: RunError }
  | { kind: "aborted"; reason: AbortReason; lastValues: unknown };

/** A stateless run whose thread (and so the run) is deleted when it ends. */
export function isEphemeral(run: QueuedRun): boolean {
  return run.kwargs.temporary && run.kwargs.on_completion === "delete";
}

/**
 * The thread's state after the run, read back through its graph (after a
 * rollback, once the run's checkpoints are deleted). Reading it may fail (a
 * reducer that rejects what the run wrote, a graph factory that throws): the
 * run then fails with that error, and the thread keeps the values it last
 * recorded, status `error`.
 */
export async function settleThread(
  run: QueuedRun & { thread?: RunThread },
  outcome: Outcome,
  deps: ExecutorDeps,
  runSaver?: BaseCheckpointSaver,
): Promise<{ outcome: Outcome; thread: ThreadStateSummary }> {
  const rolledBack = outcome.kind === "aborted" && outcome.reason === "rollback";
  if (rolledBack) await (await deps.storage.checkpointer()).deleteRun(run.thread_id, run.run_id);
  if (isEphemeral(run)) return { outcome, thread: { values: null, interrupts: {} } };
  try {
    // The run's saver knows the latest checkpoint it wrote, unless a rollback deleted them.
    const saver = rolledBack ? undefined : runSaver;
    return { outcome, thread: await threadAfter(run, deps, outcome.kind === "failed", saver) };
  } catch (error) {
    const stored = await deps.storage.threads.get(run.thread_id);
    const thread = {
      values: (stored?.values ?? null) as JsonObject | null,
      interrupts: stored?.interrupts ?? {},
      status: "error" as const,
    };
    if (outcome.kind === "failed") return { outcome, thread };
    return { outcome: { kind: "failed", error: runError(error, "Reading the run's final state failed: ") }, thread };
  }
}

/**
 * Records the run's end under its lease: `finish` (with `lastEvents`, the
 * log's last batch), or `discard` for a rollback. Resolves with the notice
 * for followers, or undefined when the lease was lost (another attempt holds
 * the run: nothing recorded).
 */
export async function record(
  run: QueuedRun,
  lease: RunLease,
  outcome: Outcome,
  thread: ThreadStateSummary,
  deps: ExecutorDeps,
  log: Logger,
  feedbackUrls: FeedbackUrls | undefined,
  lastEvents?: StoredEvent[],
): Promise<RunEndNotice | undefined> {
  if (outcome.kind === "aborted" && outcome.reason === "rollback") {
    if (!(await deps.storage.runs.discard(run.run_id, thread, lease))) return undefined;
    log.info("run rolled back");
    return { status: "interrupted", output: null };
  }
  const status: RunEnd["status"] =
    outcome.kind === "failed"
      ? "error"
      : outcome.kind === "aborted"
        ? outcome.reason === "timeout"
          ? "timeout"
          : "interrupted"
        : thread.status === "interrupted"
          ? "interrupted"
          : "success";
  const output = outcome.kind === "failed" ? { __error__: outcome.error } : toWire(outcome.lastValues);
  const deleteNow = isEphemeral(run) && !deps.statelessKeepMs;
  const failed = outcome.kind === "failed" ? outcome.error : undefined;
  // Written with the end, in its transaction: a crash after the end cannot lose the delivery.
  const webhook = deps.webhooks
    ? webhookDelivery(run, { status, values: failed ? thread.values : output, error: failed }, deps.webhooks.retryMs)
    : undefined;
  const events = lastEvents?.length ? { events: lastEvents } : {};
  const end = { status, output, thread, deleteThread: deleteNow, feedbackUrls, webhook, ...events };
  if (!(await deps.storage.runs.finish(run.run_id, end, lease))) return undefined;
  if (isEphemeral(run) && !deleteNow) {
    const removal = setTimeout(() => {
      deps.storage.threads.delete(run.thread_id).catch((err) => log.error({ err }, "deleting a stateless run's thread failed"));
    }, deps.statelessKeepMs);
    removal.unref();
  }
  log.info({ status }, "run ended");
  if (webhook) deps.webhooks?.queued();
  return { status, output };
}

/**
 * The thread's values, interrupts and status after the run, read back through its graph. A run claimed at its creation
 * carries its thread's settings as that creation left them (graph and config): the thread is not read again. With the
 * run's `saver`, the latest checkpoint is the one the run wrote last, not read back (run-checkpointer.ts).
 */
async function threadAfter(
  run: QueuedRun & { thread?: RunThread },
  deps: ExecutorDeps,
  failed: boolean,
  saver: BaseCheckpointSaver | undefined,
): Promise<ThreadStateSummary> {
  const thread = run.thread ?? (await deps.storage.threads.get(run.thread_id));
  const graphId = thread?.metadata.graph_id;
  const stored = thread && "values" in thread ? (thread.values as JsonObject | null) : null;
  let summary: ThreadStateSummary = { values: stored, interrupts: {}, status: "idle" };
  if (thread && typeof graphId === "string" && deps.graphs.has(graphId)) {
    const configurable = {
      ...(thread.config.configurable as JsonObject | undefined),
      thread_id: run.thread_id,
      checkpoint_ns: "",
    };
    const graph = await deps.graphs.get(graphId, { configurable });
    const state = await graph.getState({
      configurable: saver ? { ...configurable, __pregel_checkpointer: saver } : configurable,
    });
    summary = summarizeState(toThreadState(state));
  }
  return failed ? { ...summary, status: "error" } : summary;
}
