import type { Logger } from "../logger.js";
import type { TracingHealth } from "./health.js";
import type { TracingSettings } from "./settings.js";
import type { Span } from "./span.js";
import { patchJson, postJson, type SerializedObjects } from "./span-json.js";

/** Spans wait at most this long to be sent: a run's spans mostly end before, and go out whole in one post each. */
const BATCH_INTERVAL_MS = 200;
/** This many spans waiting are sent at once, without waiting for the interval. */
const BATCH_SPANS = 500;
/** A request carries at most about this much JSON (the tracing service takes 64 MiB; /info asks for 20 MiB). */
const MAX_REQUEST_BYTES = 8 * 1024 * 1024;
/** Requests to the tracing service under way at once at most; batches beyond wait their turn. */
const MAX_IN_FLIGHT = 4;
/** Spans waiting to be sent at most; beyond, new spans are dropped (an optional service must not grow memory). */
const MAX_QUEUED_SPANS = 20_000;
/** A request to the tracing service that takes longer is abandoned. */
const REQUEST_TIMEOUT_MS = 10_000;
/** A batch the service refused for a passing reason (429, 5xx) is sent once more after this long. */
const RETRY_AFTER_MS = 1_000;
/** At most one warning about dropped spans this often. */
const WARN_INTERVAL_MS = 30_000;

/**
 * Sends spans to the tracing service in batches (`POST /runs/batch`), in the
 * background: a run never waits for it. A span is serialised when its batch
 * leaves; one that ended by then goes out as a single post, one still open as
 * a post now and a patch once it ends. While the service is unreachable
 * (TracingHealth) batches are dropped, not held.
 */
export class SpanExporter {
  private queue: Span[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private dropped = 0;
  private lastWarnedAt = Number.NEGATIVE_INFINITY;
  private readonly url: string;
  private readonly headers: Record<string, string>;

  constructor(
    settings: TracingSettings,
    private readonly logger: Logger,
    private readonly health: TracingHealth,
    private readonly fetchImpl: typeof fetch,
  ) {
    this.url = `${settings.endpoint}/runs/batch`;
    this.headers = { "content-type": "application/json" };
    if (settings.apiKey) this.headers["x-api-key"] = settings.apiKey;
    // As the langsmith client: a key reaching several workspaces names the one to write into.
    if (settings.workspaceId) this.headers["x-tenant-id"] = settings.workspaceId;
  }

  /** A span started: queued for its post. */
  started(span: Span): void {
    this.enqueue(span);
  }

  /** A span ended: one already posted is queued again for its patch (one still queued goes out whole). */
  ended(span: Span): void {
    if (span.state === "posted") this.enqueue(span);
  }

  /** Queues a span for the next batch, or drops it when the queue is full. */
  private enqueue(span: Span): void {
    if (this.queue.length >= MAX_QUEUED_SPANS) {
      span.state = "done";
      this.drop(1);
      return;
    }
    this.queue.push(span);
    this.schedule();
  }

  /** Sends everything queued and waits for the requests under way (the caller bounds the wait). */
  async flush(): Promise<void> {
    for (;;) {
      this.send();
      if (this.queue.length === 0 && this.inFlight.size === 0) return;
      await Promise.race(this.inFlight);
    }
  }

  private schedule(): void {
    if (this.queue.length >= BATCH_SPANS) {
      this.send();
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.send();
    }, BATCH_INTERVAL_MS);
    this.timer.unref();
  }

  /** Starts requests for what is queued, as many as MAX_IN_FLIGHT allows (the rest waits for one to end). */
  private send(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.queue.length > 0 && !this.health.up()) {
      // Unreachable a moment ago: the batch is lost rather than held (the health retries after its pause).
      for (const span of this.queue) span.state = "done";
      this.drop(this.queue.length);
      this.queue = [];
      return;
    }
    while (this.queue.length > 0 && this.inFlight.size < MAX_IN_FLIGHT) {
      const body = this.takeBatch();
      if (body === undefined) continue;
      const request = this.post(body, 1).finally(() => {
        this.inFlight.delete(request);
        if (this.queue.length > 0 && !this.timer) this.schedule();
      });
      this.inFlight.add(request);
    }
  }

  /** Serialises queued spans into one request body, up to MAX_REQUEST_BYTES. */
  private takeBatch(): string | undefined {
    const posts: string[] = [];
    const patches: string[] = [];
    let bytes = 0;
    let taken = 0;
    const serialized: SerializedObjects = new Map();
    while (taken < this.queue.length && bytes < MAX_REQUEST_BYTES) {
      const span = this.queue[taken++];
      try {
        if (span.state === "queued") {
          const json = postJson(span, serialized);
          posts.push(json);
          bytes += json.length;
          span.state = span.endMs === undefined ? "posted" : "done";
        } else if (span.state === "posted") {
          const json = patchJson(span, serialized);
          patches.push(json);
          bytes += json.length;
          span.state = "done";
        }
      } catch (err) {
        span.state = "done";
        this.logger.warn({ err, span: span.name }, "a traced run could not be serialised: it is not sent");
      }
    }
    this.queue = taken === this.queue.length ? [] : this.queue.slice(taken);
    if (posts.length === 0 && patches.length === 0) return undefined;
    return `{"post":[${posts.join(",")}],"patch":[${patches.join(",")}]}`;
  }

  private async post(body: string, attempt: number): Promise<void> {
    try {
      const response = await this.fetchImpl(this.url, {
        method: "POST",
        headers: this.headers,
        body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      await response.arrayBuffer().catch(() => undefined);
      if ((response.status === 429 || response.status >= 500) && attempt === 1) {
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_MS).unref());
        return this.post(body, 2);
      }
    } catch {
      // Logged by the fetch (rate-limited) and counted by the health: the batch is lost.
    }
  }

  private drop(count: number): void {
    this.dropped += count;
    const now = Date.now();
    if (now - this.lastWarnedAt < WARN_INTERVAL_MS) return;
    this.lastWarnedAt = now;
    this.logger.warn(
      { traced_runs_dropped: this.dropped },
      "traced runs dropped: the tracing service is unreachable or slower than the runs",
    );
    this.dropped = 0;
  }
}
