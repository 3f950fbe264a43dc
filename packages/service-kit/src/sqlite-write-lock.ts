import type Database from "better-sqlite3";

/**
 * A write lock shared by the threads of one process that write the same
 * SQLite file. A thread waits on it (a futex: woken the moment the holder
 * leaves) rather than in SQLite's busy handler, which sleeps 1, 2, 5, 10…
 * ms between tries and so leaves a core idle long after the other thread's
 * transaction is over. Re-entrant within a thread. Cell states: 0 free,
 * 1 held, 2 held with waiters.
 */
export class SqliteWriteLock {
  private readonly cell: Int32Array;
  private depth = 0;

  /** A new lock, or this thread's handle on another thread's (its `buffer`, passed in workerData). */
  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.cell = new Int32Array(buffer);
  }

  get buffer(): SharedArrayBuffer {
    return this.cell.buffer as SharedArrayBuffer;
  }

  /** Runs `work` holding the lock. */
  hold<T>(work: () => T): T {
    this.acquire();
    try {
      return work();
    } finally {
      this.release();
    }
  }

  private acquire(): void {
    if (this.depth++ > 0) return;
    const cell = this.cell;
    let state = Atomics.compareExchange(cell, 0, 0, 1);
    if (state === 0) return;
    if (state !== 2) state = Atomics.exchange(cell, 0, 2);
    while (state !== 0) {
      Atomics.wait(cell, 0, 2);
      state = Atomics.exchange(cell, 0, 2);
    }
  }

  private release(): void {
    if (--this.depth > 0) return;
    if (Atomics.sub(this.cell, 0, 1) !== 1) {
      Atomics.store(this.cell, 0, 0);
      Atomics.notify(this.cell, 0, 1);
    }
  }
}

type Variadic = (...args: unknown[]) => unknown;

/**
 * Makes every write of `db` take `lock` first: transactions (each variant;
 * nested ones are savepoints inside the lock held) and statements that
 * write outside a transaction. Reads never take it (WAL readers do not wait
 * for the writer).
 */
export function guardWrites(db: Database.Database, lock: SqliteWriteLock): void {
  const guarded = <F extends Variadic>(call: F): F =>
    ((...args: unknown[]) => (db.inTransaction ? call(...args) : lock.hold(() => call(...args)))) as F;
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: Variadic) => {
    const inner = transaction(fn);
    return Object.assign(guarded(inner), {
      deferred: guarded(inner.deferred),
      immediate: guarded(inner.immediate),
      exclusive: guarded(inner.exclusive),
    });
  }) as typeof db.transaction;
  const prepare = db.prepare.bind(db);
  const seen = new WeakSet<object>();
  db.prepare = ((sql: string) => {
    const statement = prepare(sql);
    if (statement.readonly || seen.has(statement)) return statement;
    seen.add(statement);
    const methods = statement as unknown as Record<"run" | "get" | "all", Variadic>;
    for (const method of ["run", "get", "all"] as const) methods[method] = guarded(methods[method].bind(statement));
    return statement;
  }) as typeof db.prepare;
}
