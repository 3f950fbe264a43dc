import { InsufficientStorageError, ServiceUnavailableError } from "./errors.js";

/** How a failure of the service's own resources answers: 507 (disk full) or 503 (unreachable, retry later). */
export interface OutageResponse {
  status: 503 | 507;
  detail: string;
  /** Seconds, for the Retry-After header of a 503. */
  retryAfter?: number;
}

/** Seconds a client should wait before retrying when the database is unreachable (it restarts, or fails over). */
const RETRY_AFTER_SECONDS = 5;

/** Disk full: SQLite, a file write (ENOSPC, or a quota: EDQUOT), PostgreSQL (disk_full). */
const DISK_FULL_CODES = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT", "53100"]);

/**
 * The database cannot serve now but may soon: PostgreSQL shutting down or
 * starting (admin_shutdown, crash_shutdown, cannot_connect_now), out of
 * connections or memory, connection exceptions (class 08); sockets refused,
 * reset or timed out; SQLite locked beyond its busy timeout.
 */
const UNAVAILABLE_CODES = new Set([
  "57P01",
  "57P02",
  "57P03",
  "53300",
  "53200",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "SQLITE_BUSY",
]);

/** What node-postgres throws when its socket ends under a query or a connect never completes. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /is not queryable/,
  /^Client was closed and is not queryable/,
];

function codeOf(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

/** The error and its causes, outermost first (a bounded walk: causes may loop). */
function* causes(error: unknown): Generator<Error> {
  let current = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    yield current;
    current = current.cause;
  }
}

/**
 * Whether `error` (or one of its causes) is the disk being full or the
 * database being unreachable, and how to answer it. Anything else is not an
 * outage (undefined): a bug, or the client's mistake.
 */
export function outageOf(error: unknown): OutageResponse | undefined {
  for (const cause of causes(error)) {
    if (cause instanceof InsufficientStorageError) return { status: 507, detail: cause.message };
    if (cause instanceof ServiceUnavailableError)
      return { status: 503, detail: cause.message, retryAfter: cause.retryAfterSeconds };
    const code = codeOf(cause);
    if (code && DISK_FULL_CODES.has(code)) return { status: 507, detail: `Insufficient storage: ${cause.message}` };
    if (
      (code && (UNAVAILABLE_CODES.has(code) || code.startsWith("08"))) ||
      UNAVAILABLE_MESSAGES.some((m) => m.test(cause.message))
    ) {
      return { status: 503, detail: `Database unavailable: ${cause.message}`, retryAfter: RETRY_AFTER_SECONDS };
    }
  }
  return undefined;
}
