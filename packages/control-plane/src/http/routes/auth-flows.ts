import { defineRoute } from "@berth/service-kit";
import type { FastifyReply } from "fastify";
import { type AuthFlowService, CallbackRefused, type CallbackOutcome } from "../../services/auth-flows.js";
import { authUserOf } from "../../services/auth-users.js";
import {
  Authenticate,
  AuthenticateResponse,
  CallbackBody,
  CallbackQuery,
  CallbackResponse,
  ProviderIdParams,
  SetupQuery,
  WaitParams,
  WaitQuery,
  WaitResponse,
} from "../schemas/auth-service.js";
import { Detail, NOT_FOUND_RESPONSE } from "../schemas/common.js";
import { callbackPage, consentPage } from "./auth-page.js";
import type { RouteContext } from "./context.js";

const tag = "Auth Service (v2)";
const PAGE = { description: "A page for the user's browser (text/html)" };

/** The browser's page for a redirect: what happened, or why the redirect was refused (400). */
async function pageFor(reply: FastifyReply, finish: () => Promise<CallbackOutcome>): Promise<string> {
  reply.type("text/html; charset=utf-8");
  try {
    const outcome = await finish();
    if (outcome.status === "failed") reply.code(400);
    return callbackPage(outcome);
  } catch (error) {
    if (!(error instanceof CallbackRefused)) throw error;
    reply.code(400);
    return consentPage({ ok: false, title: "This sign-in cannot be completed", message: error.message });
  }
}

export function registerAuthFlowRoutes(
  { app, catalog, caller }: RouteContext,
  flows: AuthFlowService,
  /** The base of the Auth Service's redirect URIs (configuration, never a request header). */
  ownUrl: () => string,
): void {
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/auth/authenticate",
      summary: "A user's (or agent's) token for a provider, refreshed when needed; else the consent URL to send the user to",
      tag,
      body: Authenticate,
      responses: {
        200: { description: "completed with the token, or pending with url and auth_id", schema: AuthenticateResponse },
        400: { description: "Refused: `{detail}`", schema: Detail },
        ...NOT_FOUND_RESPONSE,
      },
    },
    async ({ body, request }) => flows.authenticate(authUserOf(await caller(request), body.user_id), body, ownUrl()),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/auth/wait/:auth_id",
      summary: "Wait (up to `timeout` seconds, at most 120) for a consent to complete",
      tag,
      params: WaitParams,
      query: WaitQuery,
      responses: { 200: { description: "completed with the token, failed, timeout or not_found", schema: WaitResponse } },
    },
    async ({ params, query, request }) => flows.wait(authUserOf(await caller(request)), params.auth_id, query.timeout),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/auth/callback/:provider_id",
      summary: "The provider's redirect after consent (no API key: the state authenticates it, once)",
      tag,
      params: ProviderIdParams,
      query: CallbackQuery,
      responses: { 200: PAGE, 400: PAGE },
    },
    async ({ params, query, reply }) => pageFor(reply, () => flows.callback(params.provider_id, query)),
  );
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/auth/callback/:provider_id",
      summary: "A front end relays the provider's redirect: `{code, state}`",
      tag,
      params: ProviderIdParams,
      body: CallbackBody,
      responses: {
        200: { description: "What the consent came to", schema: CallbackResponse },
        400: { description: "Unknown, mismatched, used or expired state", schema: Detail },
      },
    },
    async ({ params, body, request }) => {
      await caller(request);
      const { auth_id, status, error } = await flows.callback(params.provider_id, body);
      return { auth_id, status, error };
    },
  );
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/auth/setup/:provider_id",
      summary: "A git-host app's setup redirect after install: finishes the consent when it carries one",
      tag,
      params: ProviderIdParams,
      query: SetupQuery,
      responses: { 200: PAGE, 400: PAGE },
    },
    async ({ params, query, reply }) => {
      if (query.state || query.error) return pageFor(reply, () => flows.callback(params.provider_id, query));
      reply.type("text/html; charset=utf-8");
      return consentPage({
        ok: true,
        title: query.setup_action === "update" ? "The app was updated" : "The app was installed",
        message: `${query.installation_id ? `Installation ${query.installation_id}. ` : ""}You can close this window.`,
      });
    },
  );
}
