import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { StreamEvent } from "@langchain/core/tracers/log_stream";
import { Command, MemorySaver } from "@langchain/langgraph";
import type { Logger } from "pino";
import type { GraphRegistry } from "../graphs/registry.js";
import { toWire } from "../services/serialize.js";
import { type FeedbackUrls, PendingFeedbackUrls } from "../tracing/feedback.js";
import type { Tracing } from "../tracing/tracing.js";
import { summarizeState, toThreadState } from "../services/thread-state.js";
import type { JsonObject, QueuedRun, RunEnd, Storage, ThreadStateSummary } from "../storage/types.js";
import { EventLoopPacer } from "./event-loop-pacer.js";
import { RunEventWriter } from "./event-writer.js";
import type { RunBroker, RunEndNotice } from "./broker.js";
import { RunCheckpointer } from "./run-checkpointer.js";
import { runScope } from "./run-config.js";
import type { AbortReason, RunControl } from "./run-control.js";
import { StreamEncoder } from "./stream-encoder.js";
import { graphStreamModes, type StreamMode } from "./stream-modes.js";
import { deliverWebhook } from "./webhook.js";

export interface ExecutorDeps {
  storage: Storage;
  graphs: GraphRegistry;
  live: RunBroker;
  control: RunControl;
  logger: Logger;
  maxAttempts: number;
  /** Runs taking longer end as `timeout`; 0 disables the limit. */
  runTimeoutMs: number;
  /**
   * When the broker cannot carry a run's output and events to other processes
   * (LISTEN/NOTIFY mode), a stateless run is logged like any other and its
   * thread deleted this long after its end, so followers elsewhere can read it.
   */
  statelessKeepMs?: number;
  /** Traces runs and makes their feedback URLs, when tracing is configured. */
  tracing?: Tracing;
}

type Outcome =
  | { kind: "completed"; lastValues: unknown }
  | { kind: "failed"; error: { error: string; message: string } }
  | { kind: "aborted"; reason: AbortReason; lastValues: unknown };

/** Executes one claimed run to its end and records the outcome. */
export async function executeRun(run: QueuedRun, deps: ExecutorDeps): Promise<void> {
  const log = deps.logger.child({ run_id: run.run_id, thread_id: run.thread_id, attempt: run.attempt });
  const controller = deps.control.register(run.run_id);
  const ephemeral = isEphemeral(run) && !deps.statelessKeepMs;
  const writer = await RunEventWriter.open(
    { run_id: run.run_id, thread_id: run.thread_id, attempt: run.attempt, persistEvents: !ephemeral },
    deps.storage.runs,
    deps.live,
  );
  const timeout = deps.runTimeoutMs > 0 ? setTimeout(() => controller.abort("timeout"), deps.runTimeoutMs) : undefined;
  let notice: RunEndNotice = { status: "error", output: null };
  try {
    writer.emit("metadata", { run_id: run.run_id, thread_id: run.thread_id, attempt: run.attempt });
    const exhausted = run.attempt > deps.maxAttempts;
    const feedback = exhausted ? undefined : PendingFeedbackUrls.start(run.run_id, run.kwargs.feedback_keys, deps.tracing, log);
    const outcome = exhausted
      ? ({ kind: "failed", error: { error: "RunAttemptsExceeded", message: `Run exceeded ${deps.maxAttempts} attempts` } } as const)
      : await stream(run, deps, writer, controller.signal);
    // A run rolled back or handed on at shutdown has no end here to attach feedback to.
    const ends = !(outcome.kind === "aborted" && (outcome.reason === "rollback" || outcome.reason === "shutdown"));
    const feedbackUrls = ends ? await feedback?.settle(log) : undefined;
    // Last but for the error, which stays the final event of a failed run.
    if (feedbackUrls) writer.emit("feedback", feedbackUrls);
    if (outcome.kind === "failed") writer.emit("error", outcome.error);
    await writer.flush();
    notice = await record(run, outcome, deps, log, feedbackUrls);
  } catch (error) {
    log.error({ err: error }, "recording the run's outcome failed");
    throw error;
  } finally {
    clearTimeout(timeout);
    deps.control.release(run.run_id);
    writer.endLive(notice);
  }
}

async function stream(run: QueuedRun, deps: ExecutorDeps, writer: RunEventWriter, signal: AbortSignal): Promise<Outcome> {
  let lastValues: unknown = null;
  let checkpointer: RunCheckpointer | undefined;
  try {
    const assistant = await deps.storage.assistants.get(run.assistant_id);
    const thread = await deps.storage.threads.get(run.thread_id);
    if (!assistant) throw new Error(`Assistant ${run.assistant_id} not found`);
    if (!thread) throw new Error(`Thread ${run.thread_id} not found`);
    const scope = runScope(run, assistant, thread);
    // A stateless run's thread is deleted at its end: its checkpoints need not outlive it in the database.
    if (!isEphemeral(run)) checkpointer = new RunCheckpointer(deps.storage.checkpointer, scope.metadata);
    const graph = await deps.graphs.get(assistant.graph_id, scope.config);
    const modes = run.kwargs.stream_mode as StreamMode[];
    const encoder = new StreamEncoder(modes, run.kwargs.stream_subgraphs);
    const options = {
      ...scope.config,
      // The root traced run is the Berth run: feedback created for run_id attaches to its trace.
      runId: run.run_id,
      ...tracedBy(deps.tracing?.tracerFor(scope.ids, run.attempt)),
      configurable: { ...scope.config.configurable, __pregel_checkpointer: checkpointer ?? new MemorySaver() },
      context: scope.context,
      streamMode: graphStreamModes(modes),
      subgraphs: run.kwargs.stream_subgraphs,
      interruptBefore: run.kwargs.interrupt_before ?? undefined,
      interruptAfter: run.kwargs.interrupt_after ?? undefined,
      ...(run.kwargs.durability ? { durability: run.kwargs.durability } : {}),
      signal,
    } as Parameters<typeof graph.stream>[1];
    const input = await runInput(run, deps);
    const pacer = new EventLoopPacer();
    await pacer.yieldNow(); // let the first event (metadata) reach the client before the graph starts
    if (modes.includes("events")) {
      const events = graph.streamEvents(input, { ...options, version: "v2" } as never) as unknown as AsyncIterable<StreamEvent>;
      for await (const event of events) {
        for (const encoded of encoder.encodeStreamEvent(event)) writer.emit(encoded.event, encoded.data);
        lastValues = encoder.lastRootValues ?? lastValues;
        await pacer.maybeYield();
      }
    } else {
      const chunks = (await graph.stream(input, options)) as unknown as AsyncIterable<unknown>;
      for await (const chunk of chunks) {
        const [namespace, mode, payload] = normalizeChunk(chunk, run.kwargs.stream_subgraphs);
        if (mode === "values" && namespace.length === 0) lastValues = payload;
        for (const encoded of encoder.encode(namespace, mode, payload)) writer.emit(encoded.event, encoded.data);
        await pacer.maybeYield();
      }
    }
    if (signal.aborted) return { kind: "aborted", reason: signal.reason as AbortReason, lastValues };
    return { kind: "completed", lastValues };
  } catch (error) {
    if (signal.aborted) return { kind: "aborted", reason: signal.reason as AbortReason, lastValues };
    const err = error instanceof Error ? error : new Error(String(error));
    return { kind: "failed", error: { error: err.name, message: err.message } };
  } finally {
    await checkpointer?.settled();
  }
}

/** The run's callbacks: its tracer when it is traced (the run's config brings no callbacks of its own: it is JSON). */
function tracedBy(tracer: BaseCallbackHandler | undefined): { callbacks?: BaseCallbackHandler[] } {
  return tracer ? { callbacks: [tracer] } : {};
}

/** A stateless run whose thread (and so the run) is deleted when it ends. */
function isEphemeral(run: QueuedRun): boolean {
  return run.kwargs.temporary && run.kwargs.on_completion === "delete";
}

/** A retried attempt resumes from the run's last checkpoint instead of starting over. */
async function runInput(run: QueuedRun, deps: ExecutorDeps): Promise<unknown> {
  if (run.attempt > 1) {
    const written = deps.storage.checkpointer.list(
      { configurable: { thread_id: run.thread_id, checkpoint_ns: "" } },
      { filter: { run_id: run.run_id }, limit: 1 },
    );
    for await (const _checkpoint of written) return null;
  }
  if (run.kwargs.command) return new Command(run.kwargs.command as ConstructorParameters<typeof Command>[0]);
  return run.kwargs.input ?? null;
}

function normalizeChunk(chunk: unknown, subgraphs: boolean): [string[], string, unknown] {
  const tuple = chunk as unknown[];
  if (subgraphs) return [tuple[0] as string[], tuple[1] as string, tuple[2]];
  return [[], tuple[0] as string, tuple[1]];
}

async function record(
  run: QueuedRun,
  outcome: Outcome,
  deps: ExecutorDeps,
  log: Logger,
  feedbackUrls: FeedbackUrls | undefined,
): Promise<RunEndNotice> {
  if (outcome.kind === "aborted" && outcome.reason === "rollback") {
    await deps.storage.checkpointer.deleteRun(run.thread_id, run.run_id);
    await deps.storage.runs.discard(run.run_id, await threadAfter(run, deps, false));
    log.info("run rolled back");
    return { status: "interrupted", output: null };
  }
  // Left running on shutdown: the next start (or another worker) requeues it.
  if (outcome.kind === "aborted" && outcome.reason === "shutdown") return { status: "running", output: null };
  const thread: ThreadStateSummary = isEphemeral(run)
    ? { values: null, interrupts: {} }
    : await threadAfter(run, deps, outcome.kind === "failed");
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
  const ended = { ...run, status, updated_at: new Date().toISOString() };
  const deleteNow = isEphemeral(run) && !deps.statelessKeepMs;
  await deps.storage.runs.finish(run.run_id, { status, output, thread, deleteThread: deleteNow, feedbackUrls });
  if (isEphemeral(run) && !deleteNow) {
    const removal = setTimeout(() => {
      deps.storage.threads.delete(run.thread_id).catch((err) => log.error({ err }, "deleting a stateless run's thread failed"));
    }, deps.statelessKeepMs);
    removal.unref();
  }
  log.info({ status }, "run ended");
  if (run.kwargs.webhook) {
    const { attempt: _attempt, available_at: _availableAt, output: _output, ...record } = ended;
    const payload = { ...record, values: output, ...(outcome.kind === "failed" ? { error: outcome.error } : {}) };
    void deliverWebhook(run.kwargs.webhook, payload, log);
  }
  return { status, output };
}

/** The thread's values, interrupts and status after the run, read back through its graph. */
async function threadAfter(run: QueuedRun, deps: ExecutorDeps, failed: boolean): Promise<ThreadStateSummary> {
  const thread = await deps.storage.threads.get(run.thread_id);
  const graphId = thread?.metadata.graph_id;
  let summary: ThreadStateSummary = { values: (thread?.values ?? null) as JsonObject | null, interrupts: {}, status: "idle" };
  if (thread && typeof graphId === "string" && deps.graphs.has(graphId)) {
    const configurable = { ...(thread.config.configurable as JsonObject | undefined), thread_id: run.thread_id, checkpoint_ns: "" };
    const graph = await deps.graphs.get(graphId, { configurable });
    summary = summarizeState(toThreadState(await graph.getState({ configurable })));
  }
  return failed ? { ...summary, status: "error" } : summary;
}
