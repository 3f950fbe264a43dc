// Assertions on the control plane's error answers.
import assert from "node:assert/strict";
import type { Response } from "./api-client.js";
import type { ErrorBody } from "./api-types.js";

export type DetailMatcher = string | RegExp | RegExp[];

/** A `{detail: "..."}` answer with this status; the detail equals the string or matches every RegExp. */
export function assertError(response: Response<unknown>, status: number, detail: DetailMatcher): void {
  const shown = JSON.stringify(response.body);
  assert.equal(response.status, status, `expected ${status}, got ${response.status}: ${shown}`);
  const body = response.body as ErrorBody;
  assert.equal(typeof body?.detail, "string", `detail is not a string: ${shown}`);
  const text = body.detail as string;
  if (typeof detail === "string") assert.equal(text, detail);
  else for (const pattern of Array.isArray(detail) ? detail : [detail]) assert.match(text, pattern);
}

/** A 422 whose detail is a list of `{loc, msg, type}`, the first one at `loc` (or starting with it, when `prefix`). */
export function assertValidationError(response: Response<unknown>, loc: (string | number)[], prefix = false): void {
  const shown = JSON.stringify(response.body);
  assert.equal(response.status, 422, `expected 422, got ${response.status}: ${shown}`);
  const detail = (response.body as ErrorBody).detail;
  assert.ok(Array.isArray(detail) && detail.length > 0, `detail is not a non-empty list: ${shown}`);
  for (const entry of detail) {
    assert.ok(Array.isArray(entry.loc), `loc is not a list: ${shown}`);
    assert.ok(
      entry.loc.every((part) => typeof part === "string" || typeof part === "number"),
      shown,
    );
    assert.equal(typeof entry.msg, "string", shown);
    assert.equal(typeof entry.type, "string", shown);
  }
  const first = detail[0].loc;
  assert.deepEqual(prefix ? first.slice(0, loc.length) : first, loc, `first loc ${JSON.stringify(first)}: ${shown}`);
}
