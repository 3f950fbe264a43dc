import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { LangChainTracer } from "@langchain/core/tracers/tracer_langchain";
import type { Client } from "langsmith";
import type { Logger } from "../logger.js";
import type { RunIds } from "../storage/types.js";
import { createFeedbackClient, createTracingClient } from "./client.js";
import { TracingHealth } from "./health.js";
import type { TracingSettings } from "./settings.js";

/**
 * Traces runs into one project of a LangSmith-compatible service, and makes
 * pre-signed feedback URLs for their traces. One per process.
 */
export class Tracing {
  private constructor(
    readonly settings: TracingSettings,
    private readonly health: TracingHealth,
    private readonly traces: Client,
    private readonly feedback: Client,
  ) {}

  static create(settings: TracingSettings, logger: Logger): Tracing {
    const health = new TracingHealth(logger, settings.endpoint);
    const tracing = new Tracing(
      settings,
      health,
      createTracingClient(settings, logger, health),
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
   * The tracer of one run, passed as the run's callbacks. Graph code's own
   * runnables inherit it (and the run's config metadata) down to the last
   * child run; the ids given here are also set on every traced run that lacks
   * them, so a child invoked with a config of its own still carries them.
   * Its callbacks run in the background queue of `@langchain/core` even when
   * LANGCHAIN_CALLBACKS_BACKGROUND=false: a run never waits for tracing.
   * Runs are traced even while the service is unreachable: with
   * LANGSMITH_TRACING=true, LangChain would trace a run given no tracer with
   * its own default one anyway (the cost is the same CPU), and the traces are
   * dropped by the client.
   */
  tracerFor(ids: RunIds, attempt: number): LangChainTracer {
    return new LangChainTracer({
      client: this.traces,
      projectName: this.settings.project,
      metadata: { ...ids, run_attempt: attempt },
      _awaitHandler: false,
    });
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
   * Sends the traces still waiting (callbacks not yet run, batches not yet
   * sent), for at most `timeoutMs`: a stopping process must not hang on a
   * tracing service that is down.
   */
  async flush(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const sent = (async () => {
      // The callbacks first: they are what put runs into the client's batches.
      await awaitAllCallbacks().catch(() => undefined);
      await this.traces.awaitPendingTraceBatches().catch(() => undefined);
      return true as const;
    })();
    try {
      return await Promise.race([sent, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}
