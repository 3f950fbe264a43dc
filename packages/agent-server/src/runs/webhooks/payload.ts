import { toApiRun } from "../../storage/run-record.js";
import type { JsonObject, NewWebhookDelivery, QueuedRun, RunStatus } from "../../storage/types.js";

/** What writing a run's webhook delivery needs from the process: how long it is retried, and whom to nudge. */
export interface WebhookQueue {
  /** Retries stop this long after the run ended. */
  retryMs: number;
  /** A delivery was just written: the local deliverer looks now rather than at its next poll. */
  queued(): void;
}

/** How a run ended, as its webhook reports it. */
export interface WebhookEnd {
  status: RunStatus;
  /** The run's final values: its output, or the thread's last recorded values when it failed. */
  values: unknown;
  error?: { error: string; message: string };
}

/**
 * The delivery of a run's end to its webhook, if it has one: the run record
 * at its end with `run_started_at` (this attempt's claim), `run_ended_at`,
 * `values` and, when it failed, `error` (the message, as the official
 * server sends it). `webhook_sent_at` is stamped at each attempt.
 */
export function webhookDelivery(run: QueuedRun, end: WebhookEnd, retryMs: number): NewWebhookDelivery | undefined {
  if (!run.kwargs.webhook) return undefined;
  const ended = new Date();
  const record = toApiRun({ ...run, status: end.status, updated_at: ended.toISOString() });
  const payload = {
    ...record,
    run_started_at: run.updated_at,
    run_ended_at: ended.toISOString(),
    values: end.values ?? null,
    ...(end.error ? { error: end.error.message } : {}),
  } as JsonObject;
  return { url: run.kwargs.webhook, payload, giveUpAt: ended.getTime() + retryMs };
}

/** The body of one attempt: the stored payload with `webhook_sent_at`, in the official server's key order. */
export function attemptBody(payload: JsonObject, sentAt: Date): string {
  const { values, error, ...run } = payload;
  return JSON.stringify({ ...run, webhook_sent_at: sentAt.toISOString(), values, ...(error === undefined ? {} : { error }) });
}
