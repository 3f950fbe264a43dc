import type { SqliteDatabase } from "@berth/service-kit";
import { LOG } from "../columns.js";
import type { LogEntry, LogFilter, LogRecord, LogStore } from "../types.js";

export class SqliteLogStore implements LogStore {
  constructor(private readonly db: SqliteDatabase) {}

  async append(entries: LogEntry[]): Promise<void> {
    const insert = this.db.prepare(
      "INSERT INTO deployment_logs (deployment_id, revision_id, kind, timestamp, level, message) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.db
      .transaction(() => {
        for (const entry of entries) {
          insert.run(entry.deployment_id, entry.revision_id, entry.kind, entry.timestamp, entry.level, entry.message);
        }
      })
      .immediate();
  }

  async query(filter: LogFilter): Promise<LogRecord[]> {
    const where = ["deployment_id = ?", "kind = ?"];
    const values: unknown[] = [filter.deployment_id, filter.kind];
    const add = (clause: string, value: unknown) => {
      where.push(clause);
      values.push(value);
    };
    if (filter.revision_id) add("revision_id = ?", filter.revision_id);
    if (filter.level) add("level = ?", filter.level);
    if (filter.query) add("instr(lower(message), lower(?)) > 0", filter.query);
    if (filter.start_time) add("timestamp >= ?", filter.start_time);
    if (filter.end_time) add("timestamp <= ?", filter.end_time);
    const order = filter.order === "asc" ? "ASC" : "DESC";
    return this.db
      .prepare(`SELECT ${LOG} FROM deployment_logs WHERE ${where.join(" AND ")} ORDER BY id ${order} LIMIT ? OFFSET ?`)
      .all(...values, filter.limit, filter.offset) as LogRecord[];
  }
}
