/** A migration as a database records it (schema_migrations). */
export interface RecordedMigration {
  version: number;
  name: string;
}

/** A recorded migration to number as its file is numbered now. */
export interface Renumbering {
  from: number;
  to: number;
  name: string;
}

/** The name of a migration file without its number: `007_crons.sql` → `crons.sql`. */
function change(name: string): string {
  return name.replace(/^\d+_/, "");
}

/**
 * The recorded migrations whose file has another number now, and the number and name to record instead. A change
 * has the same number on both backends (PostgreSQL has no 003: that is SQLite's broker_signals), so databases
 * migrated before PostgreSQL's files were renumbered recorded them one lower from 003 on. A record is matched to
 * its file by the name after the number; the renumberings come highest first, so each one's new version is free
 * when it is taken.
 */
export function renumberings(recorded: readonly RecordedMigration[], files: readonly string[]): Renumbering[] {
  const fileOf = new Map(files.map((name) => [change(name), name]));
  const moves: Renumbering[] = [];
  for (const { version, name } of recorded) {
    const file = fileOf.get(change(name));
    const to = file === undefined ? version : Number.parseInt(file, 10);
    if (file !== undefined && to !== version) moves.push({ from: version, to, name: file });
  }
  return moves.sort((a, b) => b.to - a.to);
}
