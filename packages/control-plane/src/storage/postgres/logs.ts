import type pg from "pg";
import type { LogEntry, LogFilter, LogRecord, LogStore } from "../types.js";
import { LOG } from "../columns.js";

export class PostgresLogStore implements LogStore {
  constructor(private readonly pool: pg.Pool) {}

  async append(entries: LogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // One statement (all or nothing); the rows are numbered in the order given.
    await this.pool.query(
      `INSERT INTO deployment_logs (deployment_id, revision_id, kind, timestamp, level, message)
       SELECT deployment_id, revision_id, kind, timestamp, level, message
       FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[]) WITH ORDINALITY
         AS entry (deployment_id, revision_id, kind, timestamp, level, message, position)
       ORDER BY position`,
      [
        entries.map((entry) => entry.deployment_id),
        entries.map((entry) => entry.revision_id),
        entries.map((entry) => entry.kind),
        entries.map((entry) => entry.timestamp),
        entries.map((entry) => entry.level),
        entries.map((entry) => entry.message),
      ],
    );
  }

  async query(filter: LogFilter): Promise<LogRecord[]> {
    const values: unknown[] = [];
    const param = (value: unknown) => `$${values.push(value)}`;
    const where = [`deployment_id = ${param(filter.deployment_id)}`, `kind = ${param(filter.kind)}`];
    if (filter.revision_id) where.push(`revision_id = ${param(filter.revision_id)}`);
    if (filter.level) where.push(`level = ${param(filter.level)}`);
    // A plain substring (no LIKE wildcards), ASCII case-insensitive as SQLite's lower().
    if (filter.query) where.push(`strpos(lower(message), lower(${param(filter.query)}::text COLLATE "C")) > 0`);
    if (filter.start_time) where.push(`timestamp >= ${param(filter.start_time)}`);
    if (filter.end_time) where.push(`timestamp <= ${param(filter.end_time)}`);
    const order = filter.order === "asc" ? "ASC" : "DESC";
    const { rows } = await this.pool.query<LogRecord>(
      `SELECT ${LOG} FROM deployment_logs WHERE ${where.join(" AND ")}
       ORDER BY id ${order} LIMIT ${param(filter.limit)} OFFSET ${param(filter.offset)}`,
      values,
    );
    return rows;
  }
}
