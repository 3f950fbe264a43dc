import type { Logger } from "../../logger.js";
import { openSqliteDatabase, type SqliteDatabase } from "../../storage/sqlite/database.js";
import type { SignalHandlers, SignalTransport } from "./signal-broker.js";

/** How often a process reads the signals the others appended. */
const POLL_MS = 20;
/** Signals are kept this long; a process that could not read for a good part of it may have missed some. */
const KEEP_MS = 60_000;
const PRUNE_EVERY_MS = 10_000;

interface SignalRow {
  id: number;
  payload: string;
}

/**
 * Signals through the `broker_signals` table of a SQLite database that
 * several processes share: sending appends a row, receiving polls for the rows
 * past the last one read. Rows commit in id order (one writer at a time), so
 * a reader never skips one; each process prunes rows older than KEEP_MS.
 */
export class SqliteSignalTransport implements SignalTransport {
  /** Its own connection, with synchronous=NORMAL: a signal need not survive a power cut, only a killed process. */
  private readonly db: SqliteDatabase;
  private readonly statements;
  private handlers: SignalHandlers | undefined;
  private lastId = 0;
  private readAt = Date.now();
  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;

  constructor(
    file: string,
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
    this.timers.push(
      setInterval(() => this.read(), POLL_MS),
      setInterval(() => this.prune(), PRUNE_EVERY_MS),
    );
    for (const timer of this.timers) timer.unref();
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
