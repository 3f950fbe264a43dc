/**
 * JSON containment with PostgreSQL `@>` semantics: every key of `filter` is in
 * `doc` with a contained value; arrays contain each element of the filter array.
 */
export function jsonContains(doc: unknown, filter: unknown): boolean {
  if (filter === null || typeof filter !== "object") {
    if (Array.isArray(doc)) return doc.some((item) => item === filter);
    return doc === filter;
  }
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
