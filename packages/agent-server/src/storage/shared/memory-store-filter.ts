// A store search's filter on the top-level fields of item values. SQLite
// evaluates it here (a SQL function, see sqlite/database.ts); PostgreSQL
// translates the same conditions to JSONB SQL (postgres/memory-store.ts). The rules
// below are what both implement.
import type { JsonObject } from "../types.js";
import { compareCodePoints } from "./memory-store-namespaces.js";

export type StoreOperator = "$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte";

/** One condition on one top-level field; a filter is their conjunction. */
export interface StoreCondition {
  field: string;
  op: StoreOperator;
  value: unknown;
}

export const STORE_OPERATORS: readonly StoreOperator[] = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"];
const OPERATORS = new Set<string>(STORE_OPERATORS);

/**
 * The conditions of a filter: a plain value is equality; an object with a key
 * starting with "$" is a set of operators (as in LangGraph), any of which it
 * does not know is an error rather than a condition silently ignored.
 */
export function storeConditions(filter: JsonObject | undefined): StoreCondition[] {
  const conditions: StoreCondition[] = [];
  for (const [field, wanted] of Object.entries(filter ?? {})) {
    if (isOperatorObject(wanted)) {
      for (const [op, value] of Object.entries(wanted)) {
        if (!OPERATORS.has(op)) throw new Error(`Unsupported store filter operator ${op} (on field ${JSON.stringify(field)})`);
        conditions.push({ field, op: op as StoreOperator, value: value ?? null });
      }
    } else {
      // undefined is no JSON value: as null, the way it reaches PostgreSQL.
      conditions.push({ field, op: "$eq", value: wanted ?? null });
    }
  }
  return conditions;
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && Object.keys(value).some((key) => key.startsWith("$"));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Whether a value meets every condition. A missing field equals nothing, so
 * `$ne` holds for it. Ordering operators compare numbers, strings (by code
 * point) and booleans (false first), only with a field of the same JSON type:
 * any other pair, and any other operand, matches nothing.
 */
export function matchesConditions(value: unknown, conditions: StoreCondition[]): boolean {
  const record = isPlainObject(value) ? value : {};
  return conditions.every(({ field, op, value: operand }) => {
    const present = Object.hasOwn(record, field);
    const actual = record[field];
    switch (op) {
      case "$eq":
        return present && jsonEqual(actual, operand);
      case "$ne":
        return !(present && jsonEqual(actual, operand));
      default: {
        const order = present ? compareSameType(actual, operand) : undefined;
        if (order === undefined) return false;
        if (op === "$gt") return order > 0;
        if (op === "$gte") return order >= 0;
        if (op === "$lt") return order < 0;
        return order <= 0;
      }
    }
  });
}

/** The JSON types ordering operators compare. */
export type OrderedType = "number" | "string" | "boolean";

export function orderedType(value: unknown): OrderedType | undefined {
  const type = typeof value;
  return type === "number" || type === "string" || type === "boolean" ? type : undefined;
}

function compareSameType(actual: unknown, operand: unknown): number | undefined {
  const type = orderedType(operand);
  if (type === undefined || typeof actual !== type) return undefined;
  if (type === "string") return compareCodePoints(actual as string, operand as string);
  return Number(actual) - Number(operand);
}

/** JSON equality as JSONB's `=`: objects whatever their key order, arrays element by element. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}
