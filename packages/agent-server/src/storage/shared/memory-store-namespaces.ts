// Store namespaces as both backends keep them: the labels joined with ".",
// so the namespaces under a prefix are one range of the primary key.
import type { NamespaceQuery } from "../memory-store-types.js";

/** The stored text of a namespace; a label that is empty or holds "." would make it ambiguous, so it is refused. */
export function joinNamespace(labels: string[]): string {
  for (const label of labels) {
    if (label === "" || label.includes(".")) throw new Error(`Invalid store namespace label ${JSON.stringify(label)}`);
  }
  return labels.join(".");
}

/** The namespace of an item: as joinNamespace, and never empty (an item lives under at least one label). */
export function itemNamespace(labels: string[]): string {
  if (labels.length === 0) throw new Error("A store item's namespace needs at least one label");
  return joinNamespace(labels);
}

export function splitNamespace(text: string): string[] {
  return text === "" ? [] : text.split(".");
}

/**
 * The namespaces under `prefix` as stored texts: `p` itself and those from
 * `p.` (descendants) up to `p/` (end: "/" is the character after "."). Reads
 * scan `p <= namespace < end`, one range of the primary key, and keep `p` and
 * what is past `descendants` (not `p-x` and the like). Both databases compare
 * these texts bytewise (SQLite BINARY, PostgreSQL COLLATE "C").
 */
export function prefixRange(prefix: string[]): { exact: string; descendants: string; end: string } | undefined {
  if (prefix.length === 0) return undefined;
  const exact = joinNamespace(prefix);
  return { exact, descendants: `${exact}.`, end: `${exact}/` };
}

/** LangGraph's wildcard label in match conditions: any one label. */
const WILDCARD = "*";

/** The labels of a match prefix before its first wildcard: what the database can narrow the scan by. */
export function literalPrefix(prefix: string[] | undefined): string[] {
  if (!prefix) return [];
  const wildcard = prefix.indexOf(WILDCARD);
  return wildcard < 0 ? prefix : prefix.slice(0, wildcard);
}

function matchesAt(labels: string[], pattern: string[], start: number): boolean {
  if (start < 0 || start + pattern.length > labels.length) return false;
  return pattern.every((label, i) => label === WILDCARD || label === labels[start + i]);
}

/**
 * `listNamespaces` over the distinct stored namespaces of live items (those
 * under the query's literal prefix at least): both backends page in JS, so
 * matching, cutting to maxDepth and sorting are the same code.
 */
export function pageNamespaces(stored: Iterable<string>, query: NamespaceQuery): string[][] {
  const { prefix, suffix, maxDepth } = query;
  if (maxDepth !== undefined && !(Number.isInteger(maxDepth) && maxDepth >= 1)) {
    throw new RangeError(`maxDepth must be a positive integer, not ${maxDepth}`);
  }
  const found = new Map<string, string[]>();
  for (const text of stored) {
    const labels = splitNamespace(text);
    if (prefix && !matchesAt(labels, prefix, 0)) continue;
    if (suffix && !matchesAt(labels, suffix, labels.length - suffix.length)) continue;
    const cut = maxDepth === undefined ? labels : labels.slice(0, maxDepth);
    found.set(cut.join("."), cut);
  }
  return [...found.values()].sort(compareLabels).slice(query.offset, query.offset + query.limit);
}

/** Label by label, a namespace before the longer ones it begins (LangGraph sorts namespaces as tuples). */
function compareLabels(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const order = compareCodePoints(a[i], b[i]);
    if (order !== 0) return order;
  }
  return a.length - b.length;
}

/**
 * Orders strings by code point, which is their UTF-8 byte order: the order the
 * databases sort these columns in. Plain `<` compares UTF-16 units, which puts
 * U+E000..U+FFFF after the characters beyond U+FFFF (surrogate pairs).
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xSurrogate = x >= 0xd800 && x <= 0xdfff;
    const ySurrogate = y >= 0xd800 && y <= 0xdfff;
    if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
