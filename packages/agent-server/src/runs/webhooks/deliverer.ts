import type { Logger } from "pino";
import { isOwnRoutePath } from "../../config/webhook-url-policy.js";
import type { ClaimedWebhook, WebhookAttemptResult, WebhookOutbox } from "../../storage/types.js";
import { attemptBody } from "./payload.js";
import { type PostAnswer, postOnce } from "./post.js";
import { signatureHeaders } from "./signature.js";

export interface DelivererOptions {
  /** Names this process's leases. */
  owner: string;
  /** Signs deliveries (signature.ts); unsigned without it. */
  secret?: string;
  timeoutMs: number;
  allowPrivate: boolean;
  /** langgraph.json's `webhooks.headers`, resolved. */
  headers: Record<string, string>;
  /** Delivers webhooks that name a path of the project's `http.app`, in process; without it they fail. */
  ownRoutes?: OwnRouteDelivery;
  /** How often the outbox is looked at when nothing wakes the deliverer (deliveries written by other processes, retries). */
  pollMs?: number;
}

/** POSTs a webhook's body to one of the server's own routes, in process, and tells what it answered. */
export type OwnRouteDelivery = (
  path: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
) => Promise<PostAnswer>;

const DEFAULT_POLL_MS = 1_000;
const BATCH = 16;
/** Retries wait 1 s, doubling, at most 5 minutes. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 300_000;
/** Delivered and failed deliveries stay readable this long. */
const KEEP_ENDED_MS = 7 * 24 * 3600_000;
const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Delivers the outbox's webhooks: claims due deliveries under a lease (longer
 * than an attempt can take, so a lease only lapses when its deliverer died),
 * POSTs each and records the attempt. Every process that executes runs has
 * one; claims keep them from sending one delivery twice at once.
 */
export class WebhookDeliverer {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = true;
  private lastPrune = 0;
  private readonly leaseMs: number;
  private readonly pollMs: number;

  constructor(
    private readonly outbox: WebhookOutbox,
    private readonly options: DelivererOptions,
    private readonly logger: Logger,
  ) {
    this.leaseMs = options.timeoutMs + 5_000;
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Looks at the outbox now (a delivery was just written here). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.wake();
      } else {
        this.timer = setTimeout(() => this.wake(), this.pollMs);
        this.timer.unref();
      }
    });
  }

  /** Stops looking; attempts in flight finish (each within its timeout) and are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private async pass(): Promise<void> {
    try {
      for (;;) {
        const claimed = await this.outbox.claim(this.options.owner, this.leaseMs, BATCH);
        await Promise.all(claimed.map((delivery) => this.attempt(delivery)));
        if (claimed.length < BATCH || this.stopped) break;
      }
      if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) {
        this.lastPrune = Date.now();
        await this.outbox.prune(new Date(Date.now() - KEEP_ENDED_MS).toISOString());
      }
    } catch (err) {
      this.logger.warn({ err }, "reading the webhook outbox failed: trying again at the next poll");
    }
  }

  private deliverToOwnRoute(path: string, body: string, headers: Record<string, string>): Promise<PostAnswer> {
    const { ownRoutes, timeoutMs } = this.options;
    if (!ownRoutes) {
      const error = "the webhook is a path of the project's http.app, and this process serves none";
      return Promise.resolve({ kind: "no_answer", error, refused: true });
    }
    return ownRoutes(path, body, headers, timeoutMs);
  }

  private async attempt(delivery: ClaimedWebhook): Promise<void> {
    const log = this.logger.child({ run_id: delivery.run_id, thread_id: delivery.thread_id, webhook: delivery.url });
    const sentAt = new Date();
    const body = attemptBody(delivery.payload, sentAt);
    const headers = {
      ...this.options.headers,
      "content-type": "application/json",
      "user-agent": "berth-webhook",
      ...(this.options.secret ? signatureHeaders(this.options.secret, body, sentAt) : {}),
    };
    const answer = isOwnRoutePath(delivery.url)
      ? await this.deliverToOwnRoute(delivery.url, body, headers)
      : await postOnce(delivery.url, body, {
          timeoutMs: this.options.timeoutMs,
          allowPrivate: this.options.allowPrivate,
          headers,
        });
    const result = outcome(answer, delivery);
    const attempts = delivery.attempts + 1;
    try {
      if (!(await this.outbox.record(delivery.run_id, this.options.owner, result))) {
        log.warn({ attempts }, "webhook attempt not recorded: its lease was lost (another deliverer may send it again)");
        return;
      }
    } catch (err) {
      log.error({ err, attempts }, "recording a webhook attempt failed: it is sent again once its lease lapses");
      return;
    }
    if (result.outcome === "delivered") log.info({ attempts, status: result.status }, "webhook delivered");
    else if (result.outcome === "retry") {
      log.warn(
        { attempts, status: result.status, error: result.error, retry_at: new Date(result.nextAttemptAt).toISOString() },
        "webhook attempt failed: retrying",
      );
    } else log.error({ attempts, status: result.status, error: result.error }, "webhook delivery failed: giving up");
  }
}

/**
 * 2xx: delivered. 4xx but 408 and 429, a 3xx (redirects are not followed),
 * or a refused target: failed for good. Anything else (5xx, 408, 429, no
 * answer) is retried with backoff until the delivery's give-up time.
 */
function outcome(answer: PostAnswer, delivery: ClaimedWebhook): WebhookAttemptResult {
  if (answer.kind === "answered" && answer.status >= 200 && answer.status < 300) {
    return { outcome: "delivered", status: answer.status };
  }
  const status = answer.kind === "answered" ? answer.status : null;
  const error = answer.kind === "answered" ? `the receiver answered ${answer.status}` : answer.error;
  const permanent =
    answer.kind === "answered"
      ? answer.status >= 300 && answer.status < 500 && answer.status !== 408 && answer.status !== 429
      : answer.refused;
  if (permanent) return { outcome: "failed", status, error };
  const delay = Math.min(FIRST_RETRY_MS * 2 ** delivery.attempts, MAX_RETRY_MS);
  const nextAttemptAt = Date.now() + delay;
  if (nextAttemptAt > delivery.give_up_at) {
    return { outcome: "failed", status, error: `${error}; gave up after ${delivery.attempts + 1} attempts` };
  }
  return { outcome: "retry", status, error, nextAttemptAt };
}
