import type { Logger } from "../logger.js";
import type { Tracing } from "./tracing.js";

/** Feedback URLs: each requested key mapped to its pre-signed URL. */
export type FeedbackUrls = Record<string, string>;

/**
 * How long a run's end waits, after its graph finished, for feedback URLs
 * still being created (a slow tracing service); those not ready are left out.
 */
const FEEDBACK_URL_WAIT_MS = 2_000;

let warnedWithoutTracing = false;

/**
 * Feedback URLs being created while a run executes: asked for as the run
 * starts, so its end does not wait a round trip to the tracing service.
 */
export class PendingFeedbackUrls {
  private constructor(private readonly creating: Promise<FeedbackUrls>) {}

  /** Starts creating the run's feedback URLs; undefined when it asked for none or tracing is off. */
  static start(
    runId: string,
    keys: readonly string[] | null,
    tracing: Tracing | undefined,
    log: Logger,
  ): PendingFeedbackUrls | undefined {
    if (!keys || keys.length === 0) return undefined;
    if (!tracing) {
      // Without a tracing service there is no trace to attach feedback to.
      if (!warnedWithoutTracing) {
        warnedWithoutTracing = true;
        log.warn(
          "a run asked for feedback_keys but tracing is off (set LANGSMITH_TRACING=true and LANGSMITH_ENDPOINT): no feedback URLs",
        );
      }
      return undefined;
    }
    if (!tracing.up()) {
      log.warn("the tracing service is unreachable: no feedback URLs for this run");
      return undefined;
    }
    const creating = tracing.feedbackUrls(runId, keys).catch((err: unknown) => {
      log.warn({ err }, "creating feedback URLs failed");
      return {};
    });
    return new PendingFeedbackUrls(creating);
  }

  /** The URLs created (waiting at most FEEDBACK_URL_WAIT_MS more), or undefined when none could be. */
  async settle(log: Logger): Promise<FeedbackUrls | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), FEEDBACK_URL_WAIT_MS)));
    try {
      const urls = await Promise.race([this.creating, late]);
      if (urls === undefined)
        log.warn({ waited_ms: FEEDBACK_URL_WAIT_MS }, "feedback URLs not ready in time: the run ends without them");
      else if (Object.keys(urls).length === 0) log.warn("no feedback URL could be created");
      return urls && Object.keys(urls).length > 0 ? urls : undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}
