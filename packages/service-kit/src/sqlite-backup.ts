import Database from "better-sqlite3";

/** Pages per backup step: all of them, so one step copies the whole database inside one read transaction. */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies a SQLite database with SQLite's online backup API while other
 * processes keep reading and writing it: the copy is the database as one
 * committed transaction left it (in WAL mode the copy's read transaction
 * blocks no writer). The copy is a single file (rollback journal mode, no
 * WAL beside it), checked with `quick_check`.
 */
export async function backupSqliteDatabase(source: string, target: string): Promise<void> {
  const db = new Database(source, { fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    // Copied in one step: a backup copied in small steps starts over whenever another connection writes between them,
    // which a busy server does all the time.
    await db.backup(target, { progress: () => ALL_PAGES });
  } finally {
    db.close();
  }
  const copy = new Database(target, { fileMustExist: true });
  try {
    copy.pragma("journal_mode = DELETE");
    const verdict = copy.pragma("quick_check", { simple: true });
    if (verdict !== "ok") throw new Error(`the copy of ${source} failed SQLite's quick_check: ${String(verdict)}`);
  } finally {
    copy.close();
  }
}
