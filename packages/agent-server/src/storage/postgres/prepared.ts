import type pg from "pg";
import type { Queryable } from "./database.js";

/**
 * Runs a statement as a named prepared statement: each connection parses and
 * plans it once, then only binds and executes it. For the statements every
 * run sends; a name must always go with the same text.
 */
export function prepared<R extends pg.QueryResultRow = pg.QueryResultRow>(
  q: Queryable,
  name: string,
  text: string,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  // Pools and clients take a query config too; Queryable only names the (text, values) form.
  return (q as unknown as pg.ClientBase).query<R>({ name, text, values });
}
