import type pg from "pg";
import { jsonb } from "@berth/service-kit";
import { WEBHOOK_OUTBOX_COLUMNS as COLUMNS } from "../shared/columns.js";
import type {
  ClaimedWebhook,
  NewWebhookDelivery,
  WebhookAttemptResult,
  WebhookDelivery,
  WebhookDeliveryStatus,
  WebhookOutbox,
} from "../types.js";
import type { Queryable } from "./database.js";

interface DeliveryRow {
  run_id: string;
  thread_id: string;
  url: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | number;
  created_at: Date | string;
  updated_at: Date | string;
  delivered_at: Date | string | null;
}

/** Writes a run's delivery; called inside the transaction that ends the run. */
export async function insertWebhook(
  q: Queryable,
  runId: string,
  threadId: string,
  delivery: NewWebhookDelivery,
  now: string,
): Promise<void> {
  await q.query(
    `INSERT INTO webhook_outbox (run_id, thread_id, url, payload, status, next_attempt_at, give_up_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4::jsonb, 'pending', $5, $6, $7, $7) ON CONFLICT (run_id) DO NOTHING`,
    [runId, threadId, delivery.url, jsonb(delivery.payload), Date.now(), delivery.giveUpAt, now],
  );
}

/**
 * The outbox over PostgreSQL: a claim is one statement that locks the rows it
 * takes and skips those another process is claiming, so several processes
 * never hold one delivery at once.
 */
export class PostgresWebhookOutbox implements WebhookOutbox {
  constructor(private readonly pool: pg.Pool) {}

  async claim(owner: string, leaseMs: number, limit: number): Promise<ClaimedWebhook[]> {
    const now = Date.now();
    const { rows } = await this.pool.query<DeliveryRow & { payload: ClaimedWebhook["payload"]; give_up_at: string }>(
      `UPDATE webhook_outbox SET lease_owner = $2, lease_expires_at = $3
        WHERE run_id IN (
          SELECT run_id FROM webhook_outbox
           WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_expires_at IS NULL OR lease_expires_at <= $1)
           ORDER BY next_attempt_at LIMIT $4
           FOR UPDATE SKIP LOCKED)
        RETURNING ${COLUMNS}, payload, give_up_at`,
      [now, owner, now + leaseMs, limit],
    );
    return rows.map((row) => ({ ...toDelivery(row), payload: row.payload, give_up_at: Number(row.give_up_at) }));
  }

  async record(runId: string, owner: string, result: WebhookAttemptResult): Promise<boolean> {
    const now = new Date().toISOString();
    const { rowCount } = await this.pool.query(
      `UPDATE webhook_outbox SET status = $3, attempts = attempts + 1, last_status = $4, last_error = $5, next_attempt_at = $6,
          delivered_at = $7, updated_at = $8, lease_owner = NULL, lease_expires_at = NULL
        WHERE run_id = $1 AND lease_owner = $2 AND status = 'pending'`,
      [
        runId,
        owner,
        result.outcome === "retry" ? "pending" : result.outcome,
        result.status,
        result.outcome === "delivered" ? null : result.error,
        result.outcome === "retry" ? result.nextAttemptAt : Date.now(),
        result.outcome === "delivered" ? now : null,
        now,
      ],
    );
    return (rowCount ?? 0) > 0;
  }

  async get(runId: string): Promise<WebhookDelivery | undefined> {
    const { rows } = await this.pool.query<DeliveryRow>(`SELECT ${COLUMNS} FROM webhook_outbox WHERE run_id = $1`, [runId]);
    return rows[0] && toDelivery(rows[0]);
  }

  async prune(endedBefore: string): Promise<number> {
    const { rowCount } = await this.pool.query("DELETE FROM webhook_outbox WHERE status <> 'pending' AND updated_at < $1", [
      endedBefore,
    ]);
    return rowCount ?? 0;
  }
}

const iso = (value: Date | string): string => (value instanceof Date ? value : new Date(value)).toISOString();

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    run_id: row.run_id,
    thread_id: row.thread_id,
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    last_status: row.last_status,
    last_error: row.last_error,
    next_attempt_at: row.status === "pending" ? new Date(Number(row.next_attempt_at)).toISOString() : null,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    delivered_at: row.delivered_at === null ? null : iso(row.delivered_at),
  };
}
