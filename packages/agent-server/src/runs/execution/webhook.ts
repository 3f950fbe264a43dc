import type { Logger } from "pino";
import { toApiRun } from "../../storage/run-record.js";
import type { QueuedRun, RunStatus } from "../../storage/types.js";

const ATTEMPTS = 3;
const TIMEOUT_MS = 10_000;

/**
 * POSTs the final run record to the run's webhook, retrying a few times with
 * backoff. Delivery never affects the run.
 */
export async function deliverWebhook(url: string, payload: unknown, logger: Logger): Promise<boolean> {
  const body = JSON.stringify(payload);
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "berth-webhook" },
        body,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      if (response.ok) return true;
      logger.warn({ url, status: response.status, attempt }, "webhook answered with an error");
    } catch (error) {
      logger.warn({ url, err: error, attempt }, "webhook delivery failed");
    }
    if (attempt < ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
  }
  return false;
}

/** How a run ended, as its webhook reports it. */
export interface WebhookEnd {
  status: RunStatus;
  output: unknown;
  error?: { error: string; message: string };
}

/** Sends the run's end to its webhook, if it has one, in the background: the run record, `status`, `values` (and `error`). */
export function notifyRunWebhook(run: QueuedRun, end: WebhookEnd, logger: Logger): void {
  if (!run.kwargs.webhook) return;
  const record = toApiRun({ ...run, status: end.status, updated_at: new Date().toISOString() });
  void deliverWebhook(run.kwargs.webhook, { ...record, values: end.output, ...(end.error ? { error: end.error } : {}) }, logger);
}
