import Database from "better-sqlite3";
import { guardWrites, SqliteWriteLock } from "../../src/sqlite-write-lock.js";

// The writes of sqlite-write-lock.test.ts, in a module of their own: its worker thread imports this one.

export const WRITES = 2_000;

/**
 * Writes `count` rows as `writer` on `file`, one IMMEDIATE transaction each and every tenth row outside a
 * transaction, with no busy timeout: a write meeting the other thread's transaction fails with SQLITE_BUSY unless the
 * lock made it wait. Returns how many failed so.
 */
export function writeRows(file: string, lock: SqliteWriteLock | undefined, writer: string, count: number): number {
  const db = new Database(file);
  db.pragma("busy_timeout = 0");
  if (lock) guardWrites(db, lock);
  const insert = db.prepare("INSERT INTO rows (writer, n) VALUES (?, ?)");
  const inTransaction = db.transaction((n: number) => {
    insert.run(writer, n);
    db.prepare("UPDATE totals SET n = n + 1").run();
  });
  let busy = 0;
  for (let n = 0; n < count; n++) {
    try {
      if (n % 10 === 0) insert.run(writer, n);
      else inTransaction.immediate(n);
    } catch (error) {
      if ((error as { code?: string }).code !== "SQLITE_BUSY") throw error;
      busy++;
    }
  }
  db.close();
  return busy;
}

/** The worker thread's entry (sqlite-write-lock.test.ts): says it is ready, writes once `start` is set. */
export function writeRowsForThread(
  { file, buffer, start }: { file: string; buffer?: SharedArrayBuffer; start: SharedArrayBuffer },
  ready: () => void,
): number {
  const lock = buffer && new SqliteWriteLock(buffer);
  ready();
  Atomics.wait(new Int32Array(start), 0, 0);
  return writeRows(file, lock, "thread", WRITES);
}
