import { defineRoute } from "@berth/service-kit";
import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { Detail } from "../../schemas/common.js";
import type { RouteContext } from "../context.js";
import type { ScopeOfRequest } from "./scope.js";
import type { FeedbackService } from "../../../tracing/feedback.js";
import { Feedback, FeedbackToken, TokenFeedbackBody, TokenFeedbackQuery, TokenRequest } from "../../../tracing/schemas.js";
import { FeedbackCreate } from "../../../tracing/wire.js";

const tag = "Tracing: feedback";
const TokenParams = z.object({ token: z.string().min(1).max(256) });
const submitted = {
  200: { description: "Feedback recorded on the token's run, with the token's key", schema: Feedback },
  404: { description: "Unknown token", schema: Detail },
  410: { description: "Expired token", schema: Detail },
};

/** Where the client reached us: BERTH_CONTROL_PLANE_URL, else its scheme, host and the /api-host prefix if it used it. */
function tracingBaseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, "");
  const prefix = request.originalUrl.startsWith("/api-host/") ? "/api-host" : "";
  return `${request.protocol}://${request.host}${prefix}`;
}

export function registerFeedbackRoutes(
  { app, catalog }: RouteContext,
  scope: ScopeOfRequest,
  feedback: FeedbackService,
  publicUrl: string | undefined,
): void {
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/api/v1/feedback",
      summary: "Feedback on a run (createFeedback)",
      tag,
      body: FeedbackCreate,
      responses: { 200: { description: "Recorded", schema: Feedback } },
    },
    async ({ body, request }) => feedback.create(await scope(request), body),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/api/v1/feedback/tokens",
      summary: "A pre-signed feedback URL for one run and key (createPresignedFeedbackToken)",
      tag,
      body: TokenRequest,
      responses: {
        200: { description: "`url` takes POST and GET without credentials until `expires_at`", schema: FeedbackToken },
      },
    },
    async ({ body, request }) => feedback.issueToken(await scope(request), body, tracingBaseUrl(request, publicUrl)),
  );

  // The token is the credential: no API key on these two.
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/api/v1/feedback/tokens/:token",
      summary: "Submit feedback to a pre-signed URL (JSON body)",
      tag,
      params: TokenParams,
      body: TokenFeedbackBody,
      bodyOptional: true,
      responses: submitted,
    },
    async ({ params, body }) => feedback.submit(params.token, body, "body"),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/api/v1/feedback/tokens/:token",
      summary: "Submit feedback to a pre-signed URL (query parameters, objects JSON-encoded)",
      tag,
      params: TokenParams,
      query: TokenFeedbackQuery,
      responses: submitted,
    },
    async ({ params, query }) => feedback.submit(params.token, query, "query"),
  );
}
