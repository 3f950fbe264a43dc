import type { Logger } from "pino";
import {
  type JsonObject,
  type QueuedRun,
  type RunLease,
  type Storage,
  TERMINAL_RUN_STATUSES,
  type ThreadStateSummary,
} from "../../storage/types.js";
import type { RunEndNotice } from "../brokers/broker.js";
import type { RunEventWriter } from "../streaming/event-writer.js";
import { type WebhookQueue, webhookDelivery } from "../webhooks/payload.js";

/** The error a failed run reports (`error` event, `{__error__}` output). */
export interface RunError {
  error: string;
  message: string;
}

/** The error as a run reports it, its message after `context` if given. */
export function runError(error: unknown, context = ""): RunError {
  const err = error instanceof Error ? error : new Error(String(error));
  return { error: err.name, message: `${context}${err.message}` };
}

/** A run's error as an Error to throw (its name kept). */
export function asError(error: RunError): Error {
  return Object.assign(new Error(error.message), { name: error.error });
}

/** Retries of a failed end: 0.1 s, doubling to 5 s between tries, about a minute in all. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;
const RETRY_TOTAL_MS = 60_000;

export interface SalvageDeps {
  storage: Storage;
  logger: Logger;
  /** Runs with a webhook get their delivery written with their end; without it, none. */
  webhooks?: WebhookQueue;
}

/**
 * Ends a run whose execution failed outside the graph (its final state could
 * not be read or recorded, its log not written, Berth itself threw): status
 * `error`, its thread `error` with the values it last recorded, the error as
 * the stream's last event unless it already is (`emitted`). The database may
 * be briefly unavailable: the end is retried with backoff for about a minute.
 * Resolves with the end notice for followers; `lost` when another attempt
 * holds the run now (nothing to tell); undefined when it could not be ended
 * (the lease is dropped then: it lapses and a sweeper requeues the run).
 */
export async function endInError(
  run: QueuedRun,
  lease: RunLease,
  error: RunError,
  deps: SalvageDeps,
  writer?: { instance: RunEventWriter; emitted: boolean },
): Promise<RunEndNotice | "lost" | undefined> {
  const log = deps.logger.child({ run_id: run.run_id, thread_id: run.thread_id, attempt: run.attempt });
  if (writer && !writer.emitted) writer.instance.emitError(error);
  await writer?.instance.flush();
  const output = { __error__: error };
  const ephemeral = run.kwargs.temporary && run.kwargs.on_completion === "delete";
  const started = Date.now();
  for (let delay = RETRY_FIRST_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
    try {
      const thread = ephemeral ? { values: null, interrupts: {} } : await lastRecordedState(run.thread_id, deps.storage);
      const webhook = deps.webhooks
        ? webhookDelivery(run, { status: "error", values: thread.values, error }, deps.webhooks.retryMs)
        : undefined;
      const ended = await deps.storage.runs.finish(
        run.run_id,
        { status: "error", output, thread, deleteThread: ephemeral, webhook },
        lease,
      );
      if (ended) {
        log.warn({ error }, "run ended in error after a failure outside its graph");
        if (webhook) deps.webhooks?.queued();
        return { status: "error", output };
      }
      // Not ours any more: it ended or went away meanwhile (an earlier try committed after all), or another attempt holds it.
      const current = await deps.storage.runs.get(run.run_id);
      if (!current) return { status: "error", output };
      return TERMINAL_RUN_STATUSES.has(current.status) ? { status: current.status, output: current.output } : "lost";
    } catch (err) {
      if (Date.now() - started + delay > RETRY_TOTAL_MS) {
        log.error({ err }, "could not end the run: its lease will lapse and a sweeper will requeue it");
        return undefined;
      }
      log.warn({ err, retry_in_ms: delay }, "ending the run failed: retrying");
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** The thread's values and interrupts as last recorded, status `error` (its state may not be readable through its graph). */
async function lastRecordedState(threadId: string, storage: Storage): Promise<ThreadStateSummary> {
  const thread = await storage.threads.get(threadId);
  return { values: (thread?.values ?? null) as JsonObject | null, interrupts: thread?.interrupts ?? {}, status: "error" };
}
