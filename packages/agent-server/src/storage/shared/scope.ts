// Authorization scopes (types.ts `MetadataScope`) as SQL conditions. The
// condition goes into the statement that reads or writes the resource, so the
// check and the operation see the same row: there is no window in which a
// resource checked in scope is changed or swapped before it is acted on.
import { jsonb } from "@berth/service-kit";
import type { MetadataScope } from "../types.js";

/** Whether the scope restricts anything: absent or empty (`{}` is contained in every object), it does not. */
export function restricts(scope: MetadataScope | undefined): scope is MetadataScope {
  return scope !== undefined && Object.keys(scope).length > 0;
}

/**
 * SQLite: the scope as conditions to append to a WHERE (` AND ...`), with their parameters; nothing when unrestricted.
 * A string value (an owner, the usual filter) is compared by SQLite's own JSON functions, several times faster than the
 * `json_contains` function, which runs in JavaScript for every row and takes the other values.
 */
export function sqliteScope(scope: MetadataScope | undefined, column = "metadata"): { sql: string; params: string[] } {
  if (!restricts(scope)) return { sql: "", params: [] };
  let sql = "";
  const params: string[] = [];
  const rest: MetadataScope = {};
  for (const [key, value] of Object.entries(scope)) {
    if (typeof value === "string" && !/["\\]/.test(key)) {
      // json_type first: an object or a list whose JSON text equals the string must not match.
      sql += ` AND json_type(${column}, ?) = 'text' AND json_extract(${column}, ?) = ?`;
      const path = `$."${key}"`;
      params.push(path, path, value);
    } else {
      rest[key] = value;
    }
  }
  if (Object.keys(rest).length > 0) {
    sql += ` AND json_contains(${column}, ?)`;
    params.push(JSON.stringify(rest));
  }
  return { sql, params };
}

/** PostgreSQL: ` AND <column> @> $n::jsonb`, its parameter appended to `params`; nothing when unrestricted. */
export function postgresScope(scope: MetadataScope | undefined, params: unknown[], column = "metadata"): string {
  return restricts(scope) ? ` AND ${column} @> $${params.push(jsonb(scope))}::jsonb` : "";
}
