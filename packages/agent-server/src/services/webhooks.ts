import { NotFoundError, UnprocessableError } from "@berth/service-kit";
import type { WebhookUrlPolicy } from "../config/webhook-config.js";
import { isOwnRoutePath, webhookUrlProblem } from "../config/webhook-url-policy.js";
import type { Storage, WebhookDelivery } from "../storage/types.js";
import type { Access } from "./authorization.js";

export interface WebhookServiceOptions {
  /** langgraph.json's `webhooks.url`; none: any http(s) URL. */
  policy?: WebhookUrlPolicy;
  /** Private and loopback targets are allowed (berth dev, BERTH_WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate?: boolean;
  /** The project has an `http.app`, whose routes a webhook may name by their path. */
  ownRoutes?: boolean;
}

const OPEN_POLICY: WebhookUrlPolicy = {
  requireHttps: false,
  allowedDomains: [],
  allowedPorts: [],
  maxUrlLength: undefined,
  disableLoopback: false,
};

/** Which webhook URLs runs may be created with, and what became of a run's delivery. */
export class WebhookService {
  constructor(
    private readonly storage: Storage,
    private readonly options: WebhookServiceOptions = {},
  ) {}

  /** Throws a 422 on `body.webhook` when the URL breaks the policy (or is a path with no http.app to take it), before anything is written. */
  check(url: string, loc: (string | number)[] = ["body", "webhook"]): void {
    const problem = webhookUrlProblem(url, this.options.policy ?? OPEN_POLICY, this.options.allowPrivate ?? false);
    if (problem) throw new UnprocessableError(problem, loc);
    if (isOwnRoutePath(url) && !this.options.ownRoutes) {
      throw new UnprocessableError("a webhook path names a route of the project's http.app, and this project has none", loc);
    }
  }

  /** The delivery of a run's webhook: attempts, last status and error. */
  async get(threadId: string, runId: string, access: Access): Promise<WebhookDelivery> {
    const { scope } = await access.authorize("threads:read", { thread_id: threadId, run_id: runId });
    // A stateless run's thread is gone once it ended: only a scope needs the thread to judge by.
    if (scope && !(await this.storage.threads.get(threadId, scope))) throw new NotFoundError("No webhook delivery for this run");
    const delivery = await this.storage.webhooks.get(runId);
    if (!delivery || delivery.thread_id !== threadId) throw new NotFoundError("No webhook delivery for this run");
    return delivery;
  }
}
