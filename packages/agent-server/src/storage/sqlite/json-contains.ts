/**
 * JSON containment with PostgreSQL `@>` semantics for object filters: every key
 * of `filter` is in `doc` with a contained value; arrays contain each element of
 * the filter array.
 */
export function jsonContains(doc: unknown, filter: unknown): boolean {
  // A scalar contains only an equal scalar (PostgreSQL's top-level exception for
  // arrays does not apply: filters are always objects).
  if (filter === null || typeof filter !== "object") return doc === filter;
  if (Array.isArray(filter)) {
    if (!Array.isArray(doc)) return false;
    return filter.every((wanted) => doc.some((item) => jsonContains(item, wanted)));
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) return false;
  const record = doc as Record<string, unknown>;
  return Object.entries(filter as Record<string, unknown>).every(
    ([key, wanted]) => key in record && jsonContains(record[key], wanted),
  );
}
