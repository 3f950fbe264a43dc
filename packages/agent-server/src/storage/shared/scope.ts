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

/** SQLite: ` AND json_contains(<column>, ?)` and its parameter, to append to a WHERE; nothing when unrestricted. */
export function sqliteScope(scope: MetadataScope | undefined, column = "metadata"): { sql: string; params: string[] } {
  return restricts(scope)
    ? { sql: ` AND json_contains(${column}, ?)`, params: [JSON.stringify(scope)] }
    : { sql: "", params: [] };
}

/** PostgreSQL: ` AND <column> @> $n::jsonb`, its parameter appended to `params`; nothing when unrestricted. */
export function postgresScope(scope: MetadataScope | undefined, params: unknown[], column = "metadata"): string {
  return restricts(scope) ? ` AND ${column} @> $${params.push(jsonb(scope))}::jsonb` : "";
}
