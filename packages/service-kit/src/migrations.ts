import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The `NNN_name.sql` files of a directory, in order. */
export function migrationFiles(dir: string): { version: number; name: string; sql: string }[] {
  return readdirSync(dir)
    .filter((name) => /^\d+_.+\.sql$/.test(name))
    .sort()
    .map((name) => ({ version: Number.parseInt(name, 10), name, sql: readFileSync(join(dir, name), "utf8") }));
}
