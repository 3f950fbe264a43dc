import type {
  BerthCheckpointer,
  JsonObject,
  MetadataScope,
  NewThread,
  PruneStrategy,
  Thread,
  ThreadFilter,
  ThreadQuery,
  ThreadRepository,
  ThreadStateSummary,
} from "../types.js";
import { THREAD_COLUMNS } from "../shared/columns.js";
import { sqliteScope } from "../shared/scope.js";
import { expiresAtIso, nowIso } from "../shared/timestamps.js";
import type { SqliteCheckpointTables } from "./checkpoint-tables.js";
import type { SqliteDatabase } from "./database.js";
import { parseJsonColumn, toJsonColumn } from "./json-columns.js";
import { groupCommitOf } from "./group-commit.js";

interface ThreadRow {
  thread_id: string;
  status: Thread["status"];
  metadata: string;
  config: string;
  values: string | null;
  interrupts: string;
  created_at: string;
  updated_at: string;
}

function fromRow(row: ThreadRow): Thread {
  return {
    thread_id: row.thread_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    metadata: parseJsonColumn(row.metadata) ?? {},
    status: row.status,
    config: parseJsonColumn(row.config) ?? {},
    values: parseJsonColumn(row.values),
    interrupts: parseJsonColumn(row.interrupts) ?? {},
  };
}

function filterSql(filter: ThreadFilter): { where: string; params: unknown[] } {
  // Expired threads are gone for search and count before the sweeper deletes them.
  const clauses: string[] = ["(expires_at IS NULL OR expires_at > ?)"];
  const params: unknown[] = [nowIso()];
  const inScope = sqliteScope(filter.scope);
  if (inScope.sql) {
    clauses.push(inScope.sql.slice(" AND ".length));
    params.push(...inScope.params);
  }
  if (filter.ids !== undefined) {
    clauses.push(`thread_id IN (SELECT value FROM json_each(?))`);
    params.push(JSON.stringify(filter.ids));
  }
  if (filter.status !== undefined) {
    clauses.push("status = ?");
    params.push(filter.status);
  }
  if (filter.metadata !== undefined && Object.keys(filter.metadata).length > 0) {
    clauses.push("json_contains(metadata, ?)");
    params.push(JSON.stringify(filter.metadata));
  }
  if (filter.values !== undefined && Object.keys(filter.values).length > 0) {
    // A thread without values matches no values filter.
    clauses.push(`"values" IS NOT NULL AND json_contains("values", ?)`);
    params.push(JSON.stringify(filter.values));
  }
  return { where: `WHERE ${clauses.join(" AND ")}`, params };
}

export class SqliteThreadRepository implements ThreadRepository {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly checkpoints: SqliteCheckpointTables,
    private readonly checkpointer: () => Promise<BerthCheckpointer>,
  ) {}

  async create(thread: NewThread): Promise<Thread | undefined> {
    // Threads created at once (many clients starting conversations) commit together.
    return groupCommitOf(this.db).run(() => {
      const now = nowIso();
      const inserted = this.db
        .prepare(
          `INSERT INTO threads (thread_id, status, metadata, config, created_at, updated_at, expires_at, ttl_minutes)
             VALUES (?, 'idle', ?, ?, ?, ?, ?, ?) ON CONFLICT (thread_id) DO NOTHING`,
        )
        .run(
          thread.thread_id,
          JSON.stringify(thread.metadata),
          JSON.stringify(thread.config ?? {}),
          now,
          now,
          expiresAtIso(thread.ttl_minutes),
          thread.ttl_minutes ?? null,
        );
      return inserted.changes === 0 ? undefined : this.getSync(thread.thread_id);
    });
  }

  async get(threadId: string, scope?: MetadataScope): Promise<Thread | undefined> {
    return this.getSync(threadId, scope);
  }

  async patch(
    threadId: string,
    metadata: JsonObject,
    ttlMinutes?: number | null,
    scope?: MetadataScope,
  ): Promise<Thread | undefined> {
    return this.db
      .transaction(() => {
        // Read under the write lock: the row checked in scope is the one updated.
        const current = this.getSync(threadId, scope);
        if (!current) return undefined;
        this.db
          .prepare("UPDATE threads SET metadata = ?, updated_at = ? WHERE thread_id = ?")
          .run(JSON.stringify({ ...current.metadata, ...metadata }), nowIso(), threadId);
        if (ttlMinutes !== undefined) {
          this.db
            .prepare("UPDATE threads SET expires_at = ?, ttl_minutes = ? WHERE thread_id = ?")
            .run(expiresAtIso(ttlMinutes), ttlMinutes, threadId);
        }
        return this.getSync(threadId);
      })
      .immediate();
  }

  async delete(threadId: string, scope?: MetadataScope): Promise<boolean> {
    const inScope = sqliteScope(scope);
    return this.db
      .transaction(() => {
        const deleted =
          this.db.prepare(`DELETE FROM threads WHERE thread_id = ?${inScope.sql}`).run(threadId, ...inScope.params).changes > 0;
        if (deleted) this.checkpoints.deleteThread(threadId);
        return deleted;
      })
      .immediate();
  }

  async search(query: ThreadQuery): Promise<{ items: Thread[]; total: number }> {
    const { where, params } = filterSql(query);
    const rows = this.db
      .prepare(
        `SELECT ${THREAD_COLUMNS}, count(*) OVER () AS total FROM threads ${where}
         ORDER BY ${query.sort_by} ${query.sort_order}, rowid ${query.sort_order} LIMIT ? OFFSET ?`,
      )
      .all(...params, query.limit, query.offset) as (ThreadRow & { total: number })[];
    const total = rows.length > 0 ? rows[0].total : await this.count(query);
    return { items: rows.map(fromRow), total };
  }

  async count(filter: ThreadFilter): Promise<number> {
    const { where, params } = filterSql(filter);
    return (this.db.prepare(`SELECT count(*) AS n FROM threads ${where}`).get(...params) as { n: number }).n;
  }

  async sweepExpired(limit: number): Promise<number> {
    return this.db
      .transaction(() => {
        // Busy threads wait: their run ends first, and the next sweep takes them.
        const ids = this.db
          .prepare(`SELECT thread_id FROM threads WHERE expires_at <= ? AND status <> 'busy' ORDER BY expires_at LIMIT ?`)
          .all(nowIso(), limit) as { thread_id: string }[];
        const remove = this.db.prepare("DELETE FROM threads WHERE thread_id = ?");
        for (const { thread_id } of ids) {
          remove.run(thread_id);
          this.checkpoints.deleteThread(thread_id);
        }
        return ids.length;
      })
      .immediate();
  }

  async copy(sourceId: string, targetId: string, scope?: MetadataScope, metadata?: JsonObject): Promise<Thread | undefined> {
    const inScope = sqliteScope(scope);
    const copiedMetadata = metadata === undefined ? null : JSON.stringify(metadata);
    return this.db
      .transaction(() => {
        const now = nowIso();
        const copied = this.db
          .prepare(
            `INSERT INTO threads (thread_id, status, metadata, config, "values", interrupts, created_at, updated_at)
           SELECT ?, status, coalesce(?, metadata), config, "values", interrupts, ?, ? FROM threads WHERE thread_id = ?${inScope.sql}`,
          )
          .run(targetId, copiedMetadata, now, now, sourceId, ...inScope.params);
        if (copied.changes === 0) return undefined;
        this.checkpoints.copyThread(sourceId, targetId);
        return this.getSync(targetId);
      })
      .immediate();
  }

  async setState(threadId: string, state: ThreadStateSummary): Promise<void> {
    this.db
      .prepare(
        `UPDATE threads SET "values" = ?, interrupts = ?, status = coalesce(?, status), updated_at = ? WHERE thread_id = ?`,
      )
      .run(toJsonColumn(state.values), JSON.stringify(state.interrupts), state.status ?? null, nowIso(), threadId);
  }

  async idsByMetadata(filter: JsonObject): Promise<string[]> {
    const rows = this.db.prepare("SELECT thread_id FROM threads WHERE json_contains(metadata, ?)").all(JSON.stringify(filter));
    return rows.map((row) => (row as { thread_id: string }).thread_id);
  }

  async prune(threadIds: string[], strategy: PruneStrategy, scope?: MetadataScope): Promise<number> {
    let pruned = 0;
    // One thread per transaction, so a long list never holds the write lock for long.
    for (const threadId of new Set(threadIds)) {
      if (strategy === "delete") {
        if (await this.delete(threadId, scope)) pruned++;
      } else if (this.getSync(threadId, scope)) {
        await (await this.checkpointer()).keepLatest(threadId);
        pruned++;
      }
    }
    return pruned;
  }

  private getSync(threadId: string, scope?: MetadataScope): Thread | undefined {
    const inScope = sqliteScope(scope);
    const row = this.db
      .prepare(`SELECT ${THREAD_COLUMNS} FROM threads WHERE thread_id = ?${inScope.sql}`)
      .get(threadId, ...inScope.params) as ThreadRow | undefined;
    return row && fromRow(row);
  }
}
