import { Client } from "langsmith";
import type { Logger } from "../logger.js";
import type { TracingHealth } from "./health.js";
import type { TracingSettings } from "./settings.js";

/** One warning per kind of failure at most this often: an outage must not flood the log. */
const WARN_INTERVAL_MS = 30_000;
/** A request to the tracing service that takes longer is abandoned (the client's default is 90 s). */
const REQUEST_TIMEOUT_MS = 10_000;
/**
 * Traces waiting to be sent (and retried while the service is down) hold at
 * most this much memory; beyond it new traces are dropped (the client's
 * default is 1 GB, too much to hold for an optional service).
 */
const MAX_PENDING_TRACE_BYTES = 64 * 1024 * 1024;

/**
 * The langsmith client for runs of langsmith's `traceable` nested in a traced
 * run (Berth's own spans do not go through it): batched in the background
 * (`autoBatchTracing`), never holding a run's end for its root run to be sent
 * (`blockOnRootRunFinalization: false`, which LANGCHAIN_CALLBACKS_BACKGROUND=false
 * would otherwise turn on), and with its failures reported in Berth's log.
 */
export function createTracingClient(settings: TracingSettings, logger: Logger, health: TracingHealth): Client {
  return new Client({
    apiUrl: settings.endpoint,
    apiKey: settings.apiKey,
    autoBatchTracing: true,
    blockOnRootRunFinalization: false,
    timeout_ms: REQUEST_TIMEOUT_MS,
    maxIngestMemoryBytes: MAX_PENDING_TRACE_BYTES,
    fetchImplementation: reportingFetch(settings.endpoint, logger, health, { retryUnreachable: true }),
  });
}

/**
 * The client that creates feedback tokens. A run's end waits for its feedback
 * URLs, so an unreachable service must fail at once: the langsmith client
 * retries a refused connection 4 times with exponential backoff (15 s or
 * more), and a missing URL is better than a run held that long.
 */
export function createFeedbackClient(settings: TracingSettings, logger: Logger, health: TracingHealth): Client {
  return new Client({
    apiUrl: settings.endpoint,
    apiKey: settings.apiKey,
    timeout_ms: REQUEST_TIMEOUT_MS,
    fetchImplementation: reportingFetch(settings.endpoint, logger, health, { retryUnreachable: false }),
  });
}

/**
 * A connection that could not be made, marked so the langsmith client's
 * retry loop gives up at once (it never retries `ECONNABORTED`).
 */
class UnreachableError extends Error {
  readonly code = "ECONNABORTED";
}

/**
 * fetch for the span exporter (span-export.ts): failures logged and reported
 * to `health` as for the clients; the exporter drops what could not be sent.
 */
export function createTracingFetch(settings: TracingSettings, logger: Logger, health: TracingHealth): typeof fetch {
  return reportingFetch(settings.endpoint, logger, health, { retryUnreachable: true });
}

/**
 * fetch that logs failed calls to the tracing service (the client only prints
 * them to stderr, and not all of them: this puts them in the structured log
 * with the endpoint, rate-limited per path and failure), and tells `health`
 * whether the service answers.
 */
function reportingFetch(
  endpoint: string,
  logger: Logger,
  health: TracingHealth,
  options: { retryUnreachable: boolean },
): typeof fetch {
  const lastWarned = new Map<string, number>();
  const suppressed = new Map<string, number>();
  const warn = (key: string, fields: Record<string, unknown>, message: string) => {
    const now = Date.now();
    if (now - (lastWarned.get(key) ?? -Infinity) < WARN_INTERVAL_MS) {
      suppressed.set(key, (suppressed.get(key) ?? 0) + 1);
      return;
    }
    lastWarned.set(key, now);
    const skipped = suppressed.get(key) ?? 0;
    suppressed.delete(key);
    logger.warn({ tracing_endpoint: endpoint, ...fields, ...(skipped ? { similar_failures_not_logged: skipped } : {}) }, message);
  };
  return async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const path = url.startsWith(endpoint) ? url.slice(endpoint.length).split("?")[0] : url;
    const method = init?.method ?? "GET";
    try {
      const response = await fetch(input, init);
      health.answered();
      // 404 is how the client learns an optional endpoint (/info, /runs/multipart) is missing: it falls back by itself.
      if (!response.ok && response.status !== 404) {
        warn(
          `${method} ${path} ${response.status}`,
          { method, path, status: response.status },
          "tracing service refused a request; traces or feedback URLs are lost",
        );
      }
      return response;
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = cause?.code ?? cause?.message ?? (error as Error).message;
      health.unreachable();
      warn(
        `${method} ${path} ${reason}`,
        { method, path, error: reason },
        "tracing service unreachable; traces or feedback URLs are lost",
      );
      if (options.retryUnreachable) throw error;
      throw new UnreachableError(`tracing service unreachable: ${reason}`, { cause: error });
    }
  };
}
