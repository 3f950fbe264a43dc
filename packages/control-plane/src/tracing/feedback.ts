import { NotFoundError, UnprocessableError } from "@berth/service-kit";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { feedbackRecord, scoreOf } from "./feedback-record.js";
import { checkRunWritable, reachesRun, runNotFound, type TracingScope } from "./scope.js";
import { presentFeedback } from "./trace-views.js";
import type { TokenFeedbackInput, TokenRequest } from "./schemas.js";
import type { FeedbackTokenRecord, JsonObject, TracingStore } from "../storage/tracing-types.js";
import type { FeedbackCreate } from "./wire.js";

export interface FeedbackSettings {
  /** Lifetime of a token whose request names none (BERTH_FEEDBACK_TOKEN_TTL_SECONDS). */
  tokenTtlSeconds: number;
}

/** A token expired: the URL existed, so not a 404 (HTTP 410). */
export class TokenExpiredError extends Error {
  readonly statusCode = 410;
}

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

function expiry(request: TokenRequest, ttlSeconds: number, now: number): Date {
  if (request.expires_at)
    return new Date(/(Z|[+-]\d{2}:?\d{2})$/i.test(request.expires_at) ? request.expires_at : `${request.expires_at}Z`);
  const delta = request.expires_in;
  const seconds = delta
    ? (delta.days ?? 0) * 86400 + (delta.hours ?? 0) * 3600 + (delta.minutes ?? 0) * 60 + (delta.seconds ?? 0)
    : ttlSeconds;
  return new Date(now + seconds * 1000);
}

/** A score the token's feedback_config forbids (continuous bounds, categorical values) is a 422, as in LangSmith. */
function checkScore(score: number | null, config: JsonObject | null, loc: string): void {
  if (score === null || !config) return;
  const { type, min, max, categories } = config as { type?: unknown; min?: unknown; max?: unknown; categories?: unknown };
  if (type === "continuous") {
    if ((typeof min === "number" && score < min) || (typeof max === "number" && score > max)) {
      throw new UnprocessableError(`score must be between ${min ?? "-inf"} and ${max ?? "inf"}`, [loc, "score"]);
    }
  } else if (type === "categorical" && Array.isArray(categories)) {
    const allowed = categories
      .map((category) => (category as { value?: unknown })?.value)
      .filter((value) => typeof value === "number");
    if (allowed.length > 0 && !allowed.includes(score))
      throw new UnprocessableError(`score must be one of ${allowed.join(", ")}`, [loc, "score"]);
  }
}

/** Feedback with an API key (createFeedback) and through pre-signed URLs (createPresignedFeedbackToken). */
export class FeedbackService {
  constructor(
    private readonly store: TracingStore,
    private readonly settings: FeedbackSettings,
  ) {}

  async create(scope: TracingScope, body: FeedbackCreate) {
    const { tenantId } = scope;
    const record = feedbackRecord(tenantId, body, "api", new Date().toISOString());
    await checkRunWritable(this.store, scope, record.run_id);
    record.trace_id ??= (await this.store.getRun(tenantId, record.run_id))?.trace_id ?? null;
    await this.store.addFeedback([record]);
    return presentFeedback(record);
  }

  /**
   * A URL that records feedback with `feedback_key` on the run, without
   * credentials. The run need not be ingested yet: tokens are issued when a
   * run starts, while its trace is still queued in the client.
   */
  async issueToken(scope: TracingScope, request: TokenRequest, baseUrl: string) {
    const { tenantId } = scope;
    await checkRunWritable(this.store, scope, request.run_id);
    const now = Date.now();
    const token = randomBytes(32).toString("base64url");
    const expiresAt = expiry(request, this.settings.tokenTtlSeconds, now).toISOString();
    const record: FeedbackTokenRecord = {
      token_hash: hashToken(token),
      tenant_id: tenantId,
      run_id: request.run_id,
      key: request.feedback_key,
      feedback_config: request.feedback_config ?? null,
      expires_at: expiresAt,
      created_at: new Date(now).toISOString(),
    };
    await this.store.createToken(record);
    return { id: token, url: `${baseUrl}/api/v1/feedback/tokens/${token}`, expires_at: expiresAt };
  }

  /** Records the submission of a feedback URL on the token's run and key. */
  async submit(token: string, input: TokenFeedbackInput, loc: "body" | "query") {
    const stored = await this.store.getToken(hashToken(token));
    if (!stored) throw new NotFoundError("Feedback token not found");
    if (Date.parse(stored.expires_at) <= Date.now()) throw new TokenExpiredError("Feedback token has expired");
    const score = scoreOf(input.score);
    checkScore(score, stored.feedback_config, loc);
    const record = feedbackRecord(
      stored.tenant_id,
      {
        id: randomUUID(),
        run_id: stored.run_id,
        key: stored.key,
        score,
        value: input.value,
        comment: input.comment,
        correction: input.correction,
        feedback_source: { type: "token", metadata: input.metadata },
      },
      "token",
      new Date().toISOString(),
    );
    record.trace_id = (await this.store.getRun(stored.tenant_id, stored.run_id))?.trace_id ?? null;
    await this.store.addFeedback([record]);
    return presentFeedback(record);
  }

  async list(scope: TracingScope, runId: string, limit: number, offset: number) {
    const run = await this.store.getRun(scope.tenantId, runId);
    if (!run || !(await reachesRun(this.store, scope, run))) throw runNotFound(runId);
    const resources = (await this.store.listFeedback(scope.tenantId, runId, limit, offset)).map(presentFeedback);
    return { resources, offset: offset + resources.length };
  }
}
