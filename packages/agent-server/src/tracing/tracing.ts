import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import type { Client } from "langsmith";
import type { Logger } from "../logger.js";
import type { RunIds } from "../storage/types.js";
import { createFeedbackClient, createTracingClient, createTracingFetch } from "./client.js";
import { TracingHealth } from "./health.js";
import type { TracingSettings } from "./settings.js";
import { SpanExporter } from "./span-export.js";
import { SpanTracer } from "./span-tracer.js";

/**
 * Traces runs into one project of a LangSmith-compatible service, and makes
 * pre-signed feedback URLs for their traces. One per process.
 */
export class Tracing {
  /** For langsmith `traceable` runs inside traced runs only: made on first use. */
  private traceableClient: Client | undefined;
  private readonly langsmithClient = (): Client =>
    (this.traceableClient ??= createTracingClient(this.settings, this.logger, this.health));

  private constructor(
    readonly settings: TracingSettings,
    private readonly logger: Logger,
    private readonly health: TracingHealth,
    private readonly exporter: SpanExporter,
    private readonly feedback: Client,
  ) {}

  static create(settings: TracingSettings, logger: Logger): Tracing {
    const health = new TracingHealth(logger, settings.endpoint);
    const tracing = new Tracing(
      settings,
      logger,
      health,
      new SpanExporter(settings, logger, health, createTracingFetch(settings, logger, health)),
      createFeedbackClient(settings, logger, health),
    );
    if (!settings.apiKey) logger.warn({ tracing_endpoint: settings.endpoint }, "tracing is on without LANGSMITH_API_KEY");
    logger.info({ tracing_endpoint: settings.endpoint, project: settings.project }, "tracing runs");
    return tracing;
  }

  /** False while the tracing service is unreachable (see TracingHealth): runs then get no feedback URLs. */
  up(): boolean {
    return this.health.up();
  }

  /**
   * The tracer of one run, passed as the run's callbacks (span-tracer.ts).
   * Graph code's own runnables inherit it (and the run's config metadata) down
   * to the last child run; the ids given here are also set on every span that
   * lacks them, so a child invoked with a config of its own still carries them.
   * Its callbacks only record; spans leave in background batches (span-export.ts):
   * a run never waits for tracing. Being LangChain's `langchain_tracer`, it keeps
   * LangChain (with LANGSMITH_TRACING=true) from adding its own tracer. Runs are
   * traced while the service is unreachable too; the batches are dropped.
   */
  tracerFor(ids: RunIds, attempt: number): SpanTracer {
    return new SpanTracer(
      { metadata: { ...ids, run_attempt: attempt }, project: this.settings.project },
      this.exporter,
      this.langsmithClient,
      this.settings.samplingRate >= 1 || Math.random() < this.settings.samplingRate,
    );
  }

  /**
   * One pre-signed feedback URL per key for the trace whose root run is
   * `runId`. Keys whose token could not be created are left out (the client
   * logged why); never rejects.
   */
  async feedbackUrls(runId: string, keys: readonly string[]): Promise<Record<string, string>> {
    const expiration = new Date(Date.now() + this.settings.feedbackUrlTtlMs).toISOString();
    const unique = [...new Set(keys)];
    const tokens = await Promise.allSettled(
      unique.map((key) => this.feedback.createPresignedFeedbackToken(runId, key, { expiration })),
    );
    const urls: Record<string, string> = {};
    tokens.forEach((token, index) => {
      if (token.status === "fulfilled" && typeof token.value?.url === "string") urls[unique[index]] = token.value.url;
    });
    return urls;
  }

  /**
   * Sends the spans still waiting (and callbacks of other handlers not yet
   * run, `traceable` runs not yet sent), for at most `timeoutMs`: a stopping
   * process must not hang on a tracing service that is down.
   */
  async flush(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const sent = (async () => {
      // Queued callbacks first: they may still end spans or traceable runs.
      await awaitAllCallbacks().catch(() => undefined);
      await Promise.all([this.exporter.flush(), this.traceableClient?.awaitPendingTraceBatches().catch(() => undefined)]);
      return true as const;
    })();
    try {
      return await Promise.race([sent, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}
