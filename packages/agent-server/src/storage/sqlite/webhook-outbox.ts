import { nowIso } from "../shared/timestamps.js";
import { WEBHOOK_OUTBOX_COLUMNS as COLUMNS } from "../shared/columns.js";
import type {
  ClaimedWebhook,
  NewWebhookDelivery,
  WebhookAttemptResult,
  WebhookDelivery,
  WebhookDeliveryStatus,
  WebhookOutbox,
} from "../types.js";
import type { SqliteDatabase } from "./database.js";

interface DeliveryRow {
  run_id: string;
  thread_id: string;
  url: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: number;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
}

/** Writes a run's delivery; called inside the transaction that ends the run. */
export function insertWebhook(db: SqliteDatabase, runId: string, threadId: string, delivery: NewWebhookDelivery, now: string) {
  db.prepare(
    `INSERT INTO webhook_outbox (run_id, thread_id, url, payload, status, next_attempt_at, give_up_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING`,
  ).run(runId, threadId, delivery.url, JSON.stringify(delivery.payload), Date.now(), delivery.giveUpAt, now, now);
}

/** Deliveries to attempt now, given the time twice. */
const DUE = "status = 'pending' AND next_attempt_at <= ? AND (lease_expires_at IS NULL OR lease_expires_at <= ?)";

/** The outbox over SQLite: a claim is one IMMEDIATE transaction, so processes sharing the file never claim one delivery twice. */
export class SqliteWebhookOutbox implements WebhookOutbox {
  constructor(private readonly db: SqliteDatabase) {}

  async claim(owner: string, leaseMs: number, limit: number): Promise<ClaimedWebhook[]> {
    // Nearly every look finds nothing due: a plain read then, not a write lock taken and released.
    const anyDue = Date.now();
    if (!this.db.prepare(`SELECT 1 FROM webhook_outbox WHERE ${DUE} LIMIT 1`).get(anyDue, anyDue)) return [];
    return this.db
      .transaction(() => {
        const now = Date.now();
        const rows = this.db
          .prepare(`SELECT ${COLUMNS}, payload, give_up_at FROM webhook_outbox WHERE ${DUE} ORDER BY next_attempt_at LIMIT ?`)
          .all(now, now, limit) as (DeliveryRow & { payload: string; give_up_at: number })[];
        const lease = this.db.prepare("UPDATE webhook_outbox SET lease_owner = ?, lease_expires_at = ? WHERE run_id = ?");
        for (const row of rows) lease.run(owner, now + leaseMs, row.run_id);
        return rows.map((row) => ({ ...toDelivery(row), payload: JSON.parse(row.payload), give_up_at: row.give_up_at }));
      })
      .immediate();
  }

  async record(runId: string, owner: string, result: WebhookAttemptResult): Promise<boolean> {
    const now = nowIso();
    const status = result.outcome === "retry" ? "pending" : result.outcome;
    const changes = this.db
      .prepare(
        `UPDATE webhook_outbox SET status = ?, attempts = attempts + 1, last_status = ?, last_error = ?, next_attempt_at = ?,
            delivered_at = ?, updated_at = ?, lease_owner = NULL, lease_expires_at = NULL
          WHERE run_id = ? AND lease_owner = ? AND status = 'pending'`,
      )
      .run(
        status,
        result.status,
        result.outcome === "delivered" ? null : result.error,
        result.outcome === "retry" ? result.nextAttemptAt : Date.now(),
        result.outcome === "delivered" ? now : null,
        now,
        runId,
        owner,
      ).changes;
    return changes > 0;
  }

  async get(runId: string): Promise<WebhookDelivery | undefined> {
    const row = this.db.prepare(`SELECT ${COLUMNS} FROM webhook_outbox WHERE run_id = ?`).get(runId) as DeliveryRow | undefined;
    return row && toDelivery(row);
  }

  async prune(endedBefore: string): Promise<number> {
    return this.db.prepare("DELETE FROM webhook_outbox WHERE status <> 'pending' AND updated_at < ?").run(endedBefore).changes;
  }
}

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
    created_at: row.created_at,
    updated_at: row.updated_at,
    delivered_at: row.delivered_at,
  };
}
