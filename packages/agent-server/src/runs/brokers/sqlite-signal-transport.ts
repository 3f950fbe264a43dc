import { type FSWatcher, watch } from "node:fs";
import { basename, dirname } from "node:path";
import type { Logger } from "../../logger.js";
import { openSqliteDatabase, type SqliteDatabase } from "../../storage/sqlite/database.js";
import type { SignalHandlers, SignalTransport } from "./signal-broker.js";

/**
 * How often a process reads the signals the others appended when it cannot
 * watch the database's WAL file (a file system without change notices).
 */
const POLL_MS = 20;
/** With the WAL file watched, the poll is a safety net only. */
const WATCHED_POLL_MS = 1_000;
/**
 * A commit writes its WAL frames and only then publishes them to readers: a
 * read right at the notice may miss the commit, so one more read follows the
 * last notice by this much.
 */
const SETTLE_MS = 10;
/** Signals are kept this long; a process that could not read for a good part of it may have missed some. */
const KEEP_MS = 60_000;
const PRUNE_EVERY_MS = 10_000;

interface SignalRow {
  id: number;
  payload: string;
}

/**
 * Signals through the `broker_signals` table of a SQLite database that
 * several processes share: sending appends a row, receiving reads the rows
 * past the last one read whenever the database's WAL file changes (any
 * process's commit), and on a slow poll besides. Rows commit in id order (one
 * writer at a time), so a reader never skips one; each process prunes rows
 * older than KEEP_MS. An idle process thus does nothing, where a fast poll
 * kept every idle deployment waking 50 times a second.
 */
export class SqliteSignalTransport implements SignalTransport {
  /** Its own connection, with synchronous=NORMAL: a signal need not survive a power cut, only a killed process. */
  private readonly db: SqliteDatabase;
  private readonly statements;
  private handlers: SignalHandlers | undefined;
  private lastId = 0;
  private readAt = Date.now();
  private readonly timers: NodeJS.Timeout[] = [];
  private watcher: FSWatcher | undefined;
  private readPending = false;
  private settleTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly logger?: Logger,
  ) {
    this.db = openSqliteDatabase(file, "normal");
    this.statements = {
      insert: this.db.prepare("INSERT INTO broker_signals (payload, created_at) VALUES (?, ?)"),
      after: this.db.prepare("SELECT id, payload FROM broker_signals WHERE id > ? ORDER BY id"),
      last: this.db.prepare("SELECT coalesce(max(id), 0) AS id FROM broker_signals"),
      prune: this.db.prepare("DELETE FROM broker_signals WHERE created_at < ?"),
    };
  }

  async start(handlers: SignalHandlers): Promise<void> {
    this.handlers = handlers;
    this.lastId = (this.statements.last.get() as { id: number }).id; // no replay of older signals
    this.readAt = Date.now();
    this.watcher = this.watchWal();
    this.timers.push(
      setInterval(() => this.read(), this.watcher ? WATCHED_POLL_MS : POLL_MS),
      setInterval(() => this.prune(), PRUNE_EVERY_MS),
    );
    for (const timer of this.timers) timer.unref();
  }

  /** Watches the directory, not the file: SQLite deletes the WAL when its last connection closes and creates it anew. */
  private watchWal(): FSWatcher | undefined {
    const wal = `${basename(this.file)}-wal`;
    try {
      const watcher = watch(dirname(this.file), { persistent: false }, (_event, name) => {
        if (name === wal) this.changed();
      });
      watcher.on("error", (err) => {
        this.logger?.warn({ err }, "watching the database for signals failed: polling for them instead");
        watcher.close();
        this.watcher = undefined;
        this.timers.push(setInterval(() => this.read(), POLL_MS).unref());
      });
      return watcher;
    } catch (err) {
      this.logger?.warn({ err }, "the database's directory cannot be watched: polling for signals instead");
      return undefined;
    }
  }

  /** A commit landed: read once at the next turn of the loop (however many notices came), and once more shortly after the last. */
  private changed(): void {
    if (!this.readPending) {
      this.readPending = true;
      setImmediate(() => {
        this.readPending = false;
        this.read();
      });
    }
    this.settleTimer?.refresh();
    this.settleTimer ??= setTimeout(() => {
      this.settleTimer = undefined;
      this.read();
    }, SETTLE_MS).unref();
  }

  send(payload: string): void {
    if (this.closed) return;
    try {
      this.statements.insert.run(payload, Date.now());
    } catch (err) {
      this.logger?.error({ err, payload }, "appending a broker signal failed");
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    clearTimeout(this.settleTimer);
    for (const timer of this.timers) clearInterval(timer);
    this.db.close();
  }

  private read(): void {
    if (this.closed || !this.handlers) return;
    try {
      const rows = this.statements.after.all(this.lastId) as SignalRow[];
      const now = Date.now();
      const stalled = now - this.readAt > KEEP_MS / 2;
      this.readAt = now;
      for (const row of rows) {
        this.lastId = row.id;
        this.handlers.receive(row.payload);
      }
      if (stalled) this.handlers.lost(); // rows older than KEEP_MS may have been pruned unread
    } catch (err) {
      this.logger?.error({ err }, "reading broker signals failed");
    }
  }

  private prune(): void {
    try {
      this.statements.prune.run(Date.now() - KEEP_MS);
    } catch (err) {
      this.logger?.error({ err }, "pruning broker signals failed");
    }
  }
}
