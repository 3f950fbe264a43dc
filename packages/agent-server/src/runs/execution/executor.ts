import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { StreamEvent } from "@langchain/core/tracers/log_stream";
import { Command } from "@langchain/langgraph";
import type { Logger } from "pino";
import type { Assistant, QueuedRun, RunLease, RunThread } from "../../storage/types.js";
import { PendingFeedbackUrls } from "../../tracing/feedback.js";
import type { RunEndNotice } from "../brokers/broker.js";
import { RunEventWriter } from "../streaming/event-writer.js";
import { ProtocolEncoder, type ProtocolRecord } from "../streaming/protocol-encoder.js";
import { StreamEncoder } from "../streaming/stream-encoder.js";
import { graphStreamModes, type StreamMode } from "../streaming/stream-modes.js";
import { EventLoopPacer } from "./event-loop-pacer.js";
import type { ExecutorDeps } from "./executor-deps.js";
import { RunCheckpointer } from "./run-checkpointer.js";
import { runScope } from "./run-config.js";
import type { AbortReason } from "./run-control.js";
import { ephemeralSaver } from "./ephemeral-saver.js";
import { isEphemeral, type Outcome, record, settleThread } from "./run-end.js";
import { asError, endInError, type RunError, runError } from "./run-salvage.js";

export type { ExecutorDeps };

/**
 * How an execution ended: the run's end was recorded; the run was handed back
 * to the queue (shutdown); another attempt holds it now (nothing recorded); or
 * its end could not be recorded at all (its lease is left to lapse).
 */
export type RunEnding = "ended" | "handed_over" | "lease_lost" | "unrecorded";

/** What an execution tells followers, if anything, and how it ended. */
interface Conclusion {
  ending: RunEnding;
  /** Followers are told the run ended, or (handed over) that it goes on elsewhere; nothing when another attempt holds it. */
  notice?: RunEndNotice;
}

/** One attempt's event writer, once opened, and whether the run's `error` event is out. */
interface AttemptLog {
  writer?: RunEventWriter;
  errorEmitted: boolean;
}

/**
 * A claimed run; `claimedAtCreation` when the creation that inserted it claimed it here (its event log is empty),
 * `assistant` when that creation read it a moment before, `thread` when that creation made it (a stateless run's) or
 * read it: neither is read again. `threadCheckpointed` when that creation found whether the thread had a root
 * checkpoint: one without has its first read of the thread's state skipped.
 */
export interface ExecutableRun extends QueuedRun {
  claimedAtCreation?: boolean;
  assistant?: Assistant;
  thread?: RunThread;
  threadCheckpointed?: boolean;
}

/**
 * Executes one claimed run to its end and records the outcome under `lease`.
 * Never throws: whatever fails around the graph (the graph's factory, reading
 * its final state, writing its log, recording its end) ends the run `error`.
 */
export async function executeRun(run: ExecutableRun, lease: RunLease, deps: ExecutorDeps): Promise<RunEnding> {
  const startedAt = performance.now();
  const log = deps.logger.child({ run_id: run.run_id, thread_id: run.thread_id, attempt: run.attempt });
  const controller = deps.control.register(run.run_id);
  const timeout = deps.runTimeoutMs > 0 ? setTimeout(() => controller.abort("timeout"), deps.runTimeoutMs) : undefined;
  const attemptLog: AttemptLog = { errorEmitted: false };
  let conclusion: Conclusion;
  try {
    conclusion = await attempt(run, lease, deps, controller, attemptLog, log);
  } catch (error) {
    log.error({ err: error }, "the run failed outside its graph");
    const writer = attemptLog.writer && { instance: attemptLog.writer, emitted: attemptLog.errorEmitted };
    const salvaged = await endInError(run, lease, runError(error), deps, writer);
    conclusion =
      salvaged === "lost"
        ? { ending: "lease_lost" }
        : salvaged
          ? { ending: "ended", notice: salvaged }
          : { ending: "unrecorded" };
  } finally {
    clearTimeout(timeout);
    deps.control.release(run.run_id, controller);
  }
  // Not when its end could not be recorded either: followers wait for the attempt that will end it.
  if (conclusion.notice) deps.broker.end(run.run_id, conclusion.notice);
  if (conclusion.ending === "ended" && conclusion.notice)
    deps.stats?.record(conclusion.notice.status, performance.now() - startedAt);
  return conclusion.ending;
}

async function attempt(
  run: ExecutableRun,
  lease: RunLease,
  deps: ExecutorDeps,
  controller: AbortController,
  attemptLog: AttemptLog,
  log: Logger,
): Promise<Conclusion> {
  const persistEvents = !(isEphemeral(run) && !deps.statelessKeepMs);
  const threadSequence = run.kwargs.stream_protocol === "v2";
  const logIntervalMs = deps.eventLogIntervalMs;
  const logEmpty = run.claimedAtCreation === true && run.attempt === 1;
  const writerRun = { ...run, persistEvents, lease, threadSequence, logIntervalMs, logEmpty };
  const writer = await RunEventWriter.open(writerRun, deps.storage.runs, deps.broker, {
    failed: (err) => {
      log.error({ err }, "writing the run's event log failed: the run ends in error");
      controller.abort("failure");
    },
    leaseLost: () => controller.abort("lease_lost"),
  });
  attemptLog.writer = writer;
  // As the reference: `{run_id, attempt}`. A stateless run also names its thread, which its client could not know otherwise.
  const threadOfStateless = run.kwargs.temporary ? { thread_id: run.thread_id } : {};
  if (!threadSequence) writer.emit("metadata", { run_id: run.run_id, ...threadOfStateless, attempt: run.attempt });
  const exhausted = run.attempt - run.handovers > deps.maxAttempts;
  const runsGraph = !exhausted && !run.cancel_action;
  const feedback = runsGraph ? PendingFeedbackUrls.start(run.run_id, run.kwargs.feedback_keys, deps.tracing, log) : undefined;
  const saver: { checkpointer?: RunCheckpointer } = {};
  let outcome: Outcome = run.cancel_action
    ? { kind: "aborted", reason: run.cancel_action, lastValues: null } // cancelled while no attempt executed it
    : exhausted
      ? { kind: "failed", error: { error: "RunAttemptsExceeded", message: `Run exceeded ${deps.maxAttempts} attempts` } }
      : await stream(run, deps, writer, controller.signal, saver);
  if (writer.failure) outcome = { kind: "failed", error: logFailure(writer.failure) };
  if (outcome.kind === "aborted" && outcome.reason === "lease_lost") {
    log.warn("another attempt holds the run now: this one stops without recording anything");
    return { ending: "lease_lost" };
  }
  if (outcome.kind === "aborted" && outcome.reason === "shutdown") return handOver(run, lease, writer, deps, log);
  const settled = await settleThread(run, outcome, deps, saver.checkpointer);
  outcome = settled.outcome;
  // A run rolled back has no end here to attach feedback to.
  const feedbackUrls = outcome.kind === "aborted" && outcome.reason === "rollback" ? undefined : await feedback?.settle(log);
  // Last but for the error, which stays the final event of a failed run.
  if (feedbackUrls) writer.emit("feedback", feedbackUrls);
  // As for a root end the graph streamed: the events before it are in the log first.
  if (threadSequence && (outcome.kind === "failed" || outcome.kind === "aborted")) await writer.flush();
  if (outcome.kind === "failed") {
    writer.emitError(outcome.error);
    attemptLog.errorEmitted = true;
  } else if (outcome.kind === "aborted" && threadSequence) {
    // A protocol client waits for the root's end: a cancelled graph stream never sends it.
    writer.emitError({ error: "RunCancelled", message: `The run was cancelled (${outcome.reason})` });
  }
  // A classic run's last events are logged with its end, in its transaction (a protocol run's raise its thread's sequence).
  const lastEvents = threadSequence ? undefined : await writer.unloggedAtEnd();
  if (!lastEvents) await writer.flush();
  // The log lost its last events: the run cannot be followed to its end, so it does not succeed.
  if (writer.failure && outcome.kind !== "failed") throw asError(logFailure(writer.failure));
  let notice: RunEndNotice | undefined;
  try {
    notice = await record(run, lease, outcome, settled.thread, deps, log, feedbackUrls, lastEvents);
  } catch (error) {
    // Recording failed: it is ended in error instead, with the error it had if it failed anyway.
    throw outcome.kind === "failed" ? asError(outcome.error) : error;
  }
  if (notice) writer.loggedWithEnd();
  return notice ? { ending: "ended", notice } : { ending: "lease_lost" };
}

function logFailure(failure: Error): RunError {
  return runError(failure, "Writing the run's event log failed: ");
}

/**
 * Hands the run back to the queue at shutdown, its events logged first: the
 * attempt does not count against the limit. Should handing it back fail, the
 * worker releases its runs once more as it stops.
 */
async function handOver(
  run: QueuedRun,
  lease: RunLease,
  writer: RunEventWriter,
  deps: ExecutorDeps,
  log: Logger,
): Promise<Conclusion> {
  await writer.flush();
  try {
    await deps.storage.runs.release(lease.owner, { run_id: run.run_id, attempt: lease.attempt });
    // Other processes' workers may have stopped looking (nothing was pending): this one is now.
    deps.broker.wakeWorkers();
    log.info("run handed back to the queue at shutdown");
  } catch (err) {
    log.error({ err }, "handing the run back failed");
  }
  return { ending: "handed_over", notice: { status: "running", output: null } };
}

/** Streams the run's graph; `saver.checkpointer` is the run's checkpointer, once made. */
async function stream(
  run: ExecutableRun,
  deps: ExecutorDeps,
  writer: RunEventWriter,
  signal: AbortSignal,
  saver: { checkpointer?: RunCheckpointer },
): Promise<Outcome> {
  let lastValues: unknown = null;
  let checkpointer: RunCheckpointer | undefined;
  try {
    const assistant = run.assistant ?? (await deps.storage.assistants.get(run.assistant_id));
    const thread = run.thread ?? (await deps.storage.threads.get(run.thread_id));
    if (!assistant) throw new Error(`Assistant ${run.assistant_id} not found`);
    // A protocol run announces itself before its graph loads, as a classic run's `metadata` does.
    const protocol = run.kwargs.stream_protocol === "v2" ? new ProtocolEncoder(assistant.graph_id) : undefined;
    if (protocol) emitProtocol(writer, protocol.running());
    if (!thread) throw new Error(`Thread ${run.thread_id} not found`);
    const scope = runScope(run, assistant, thread, run.attempt, deps.apiUrl?.());
    // A stateless run's thread is deleted at its end: its checkpoints need not outlive it in the database.
    if (!isEphemeral(run)) {
      const emptyThread = run.threadCheckpointed === false ? run.thread_id : undefined;
      checkpointer = new RunCheckpointer(await deps.storage.checkpointer(), scope.metadata, emptyThread);
      saver.checkpointer = checkpointer;
    }
    const graph = await deps.graphs.get(assistant.graph_id, scope.config);
    const modes = run.kwargs.stream_mode as StreamMode[];
    const encoder = new StreamEncoder(modes, run.kwargs.stream_subgraphs);
    const options = {
      ...scope.config,
      // The root traced run is the Berth run: feedback created for run_id attaches to its trace.
      runId: run.run_id,
      ...tracedBy(deps.tracing?.tracerFor(scope.ids, run.attempt)),
      configurable: { ...scope.config.configurable, __pregel_checkpointer: checkpointer ?? ephemeralSaver() },
      // LangGraph hands `store` to every node and subgraph (config.store, getStore()).
      ...(deps.store ? { store: deps.store } : {}),
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
    if (protocol) {
      const encoder = protocol;
      const { streamMode: _modes, subgraphs: _subgraphs, ...protocolOptions } = options as Record<string, unknown>;
      const events = (await graph.streamEvents(input, {
        ...protocolOptions,
        version: "v3",
      } as never)) as AsyncIterable<ProtocolRecord>;
      for await (const event of events) {
        for (const record of encoder.encode(event)) {
          // A client that sees the root's end finds every earlier event in the log (agent.getTree, a replay).
          if (isRootEnd(record)) await writer.flush();
          emitProtocol(writer, record);
        }
        lastValues = encoder.lastRootValues ?? lastValues;
        await pacer.maybeYield();
      }
    } else if (modes.includes("events")) {
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
    return { kind: "failed", error: runError(error) };
  } finally {
    await checkpointer?.close();
  }
}

function isRootEnd(record: ProtocolRecord): boolean {
  return (
    record.method === "lifecycle" &&
    record.params.namespace.length === 0 &&
    record.params.data !== null &&
    ["completed", "interrupted", "failed"].includes(String((record.params.data as { event?: unknown }).event))
  );
}

function emitProtocol(writer: RunEventWriter, record: ProtocolRecord): void {
  writer.emitProtocol(record.method, record.params);
}

/** The run's callbacks: its tracer when it is traced (the run's config brings no callbacks of its own: it is JSON). */
function tracedBy(tracer: BaseCallbackHandler | undefined): { callbacks?: BaseCallbackHandler[] } {
  return tracer ? { callbacks: [tracer] } : {};
}

/** A retried attempt resumes from the run's last checkpoint instead of starting over. */
async function runInput(run: QueuedRun, deps: ExecutorDeps): Promise<unknown> {
  if (run.attempt > 1) {
    const written = (await deps.storage.checkpointer()).list(
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
