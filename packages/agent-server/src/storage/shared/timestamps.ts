/** Now, as the ISO-8601 UTC text both backends store and return timestamps in. */
export function nowIso(): string {
  return new Date().toISOString();
}

/** The latest instant that stays a 4-digit-year ISO string (which sorts as text in SQLite). */
export const LATEST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * `minutes` after `nowMs`, in whole milliseconds (floored, as PostgreSQL's
 * refresh computes it: postgres/memory-store.ts), kept between the epoch and LATEST_MS.
 */
export function msAfterMinutes(nowMs: number, minutes: number): number {
  return Math.max(0, Math.min(Math.floor(nowMs + minutes * 60_000), LATEST_MS));
}

/** When something with a ttl of `minutes` given now expires, as stored ISO text; null: never. */
export function expiresAtIso(minutes: number | null | undefined): string | null {
  return minutes === null || minutes === undefined ? null : new Date(msAfterMinutes(Date.now(), minutes)).toISOString();
}
