import { BadRequestError } from "@berth/service-kit";
import { randomUUID } from "node:crypto";
import type { FeedbackRecord } from "../storage/tracing-types.js";
import type { FeedbackCreate } from "./wire.js";

/** LangSmith scores are numbers or booleans; a boolean is kept as 1 or 0. */
export function scoreOf(score: number | boolean | null | undefined): number | null {
  if (score === undefined || score === null) return null;
  return typeof score === "boolean" ? Number(score) : score;
}

/** The stored feedback of a createFeedback body (POST /feedback or a multipart `feedback.<id>` part). */
export function feedbackRecord(tenantId: string, feedback: FeedbackCreate, defaultSource: string, now: string): FeedbackRecord {
  // Berth keeps feedback on runs; LangSmith's project-level feedback (a session_id and no run) has nowhere to go.
  if (!feedback.run_id)
    throw new BadRequestError("Feedback needs a run_id: feedback on a project without a run is not supported");
  return {
    tenant_id: tenantId,
    id: feedback.id ?? randomUUID(),
    run_id: feedback.run_id,
    trace_id: feedback.trace_id ?? null,
    key: feedback.key,
    score: scoreOf(feedback.score),
    value: feedback.value ?? null,
    comment: feedback.comment ?? null,
    correction: feedback.correction ?? null,
    metadata: feedback.feedback_source?.metadata ?? null,
    source: feedback.feedback_source?.type || defaultSource,
    created_at: now,
  };
}
