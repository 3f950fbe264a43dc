import { z } from "zod";

/** Runs on a scale-out deployment's database, as its agent servers count them. */
export interface QueueDepth {
  /** Pending runs available now. */
  pending: number;
  running: number;
  /** When the earliest run delayed by after_seconds becomes due (ms since the epoch); undefined: none is (or an older server). */
  nextDelayedAt?: number;
}

/** A read that takes longer than this fails (the autoscaler tries again at its next look). */
const READ_TIMEOUT_MS = 5_000;

const count = z.number().int().min(0);
const metricsBody = z.object({
  queue: z.object({ n_pending: count, n_running: count, next_delayed_at: z.iso.datetime().optional() }),
});

/**
 * The queue's depth from `GET /metrics` of one API replica, called directly
 * with the deployment's upstream key (as the router does): the database is
 * shared, so any replica counts every run. Rejects with the reason when it
 * cannot be read.
 */
export async function readQueueDepth(replicaUrl: string, upstreamKey: string): Promise<QueueDepth> {
  const response = await fetch(new URL("/metrics?format=json", replicaUrl), {
    headers: { "x-api-key": upstreamKey },
    signal: AbortSignal.timeout(READ_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
  const parsed = metricsBody.safeParse(await response.json());
  if (!parsed.success) throw new Error(`GET /metrics answered no queue counts: ${parsed.error.message}`);
  const { n_pending: pending, n_running: running, next_delayed_at: nextDelayed } = parsed.data.queue;
  return { pending, running, ...(nextDelayed ? { nextDelayedAt: Date.parse(nextDelayed) } : {}) };
}
