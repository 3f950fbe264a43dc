import * as oauth from "oauth4webapi";
import { OAuthError } from "./errors.js";
import { checkUrl, type OutboundOptions } from "./outbound.js";
import type { ProviderEndpoints } from "./provider-endpoints.js";

/**
 * The `state` of a consent flow: `<flowId>.<random>`. The flow id finds the
 * flow again at the callback; the random part makes the state unguessable, so
 * the callback must still compare the whole state with the flow's.
 */
export function createState(flowId: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(flowId)) throw new OAuthError("a flow id may hold only letters, digits, '-' and '_'");
  return `${flowId}.${oauth.generateRandomState()}`;
}

/** The flow id a state made by createState carries; null for any other string. */
export function flowIdFromState(state: string): string | null {
  const match = /^([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]+$/.exec(state);
  return match ? match[1] : null;
}

/** A fresh PKCE code verifier (RFC 7636: 43 characters of base64url). */
export function createCodeVerifier(): string {
  return oauth.generateRandomCodeVerifier();
}

export interface AuthorizationRequest {
  /** Our callback, exactly as registered with the provider; the code exchange must repeat it. */
  redirectUri: string;
  scopes: string[];
  state: string;
  /** Required when the provider uses PKCE, ignored otherwise. */
  codeVerifier?: string | null;
}

/** The PKCE method to use: the provider's, S256 unless it says plain. */
function challengeMethod(provider: ProviderEndpoints): "S256" | "plain" {
  const method = provider.code_challenge_method ?? "S256";
  if (method !== "S256" && method !== "plain") throw new OAuthError(`unsupported code_challenge_method ${method}`);
  return method;
}

/**
 * The URL to send the user to for consent (RFC 6749 §4.1.1, with RFC 7636 PKCE
 * and the RFC 8707 resource when the provider names one). Parameters already
 * in auth_url (e.g. a provider's `prompt=consent`) are kept unless ours replace them.
 */
export async function buildAuthorizationUrl(
  provider: ProviderEndpoints,
  request: AuthorizationRequest,
  options: OutboundOptions = {},
): Promise<string> {
  const url = checkUrl(provider.auth_url, "the authorization URL", options);
  const params = url.searchParams;
  params.set("response_type", "code");
  params.set("client_id", provider.client_id);
  params.set("redirect_uri", request.redirectUri);
  if (request.scopes.length > 0) params.set("scope", request.scopes.join(" "));
  params.set("state", request.state);
  if (provider.resource) params.set("resource", provider.resource);
  if (provider.uses_pkce) {
    if (!request.codeVerifier) throw new OAuthError("the provider uses PKCE: a code verifier is required");
    const method = challengeMethod(provider);
    const challenge = method === "S256" ? await oauth.calculatePKCECodeChallenge(request.codeVerifier) : request.codeVerifier;
    params.set("code_challenge", challenge);
    params.set("code_challenge_method", method);
  }
  return url.href;
}

/** A consent flow's start: the URL for the user and what the flow must keep for the callback. */
export interface StartedAuthorization {
  url: string;
  state: string;
  /** Keep it secret with the flow; the code exchange needs it. Null without PKCE. */
  code_verifier: string | null;
}

/** Makes the state (and PKCE verifier when the provider uses PKCE) and builds the consent URL. */
export async function startAuthorization(
  provider: ProviderEndpoints,
  flow: { flowId: string; redirectUri: string; scopes: string[] },
  options: OutboundOptions = {},
): Promise<StartedAuthorization> {
  const state = createState(flow.flowId);
  const codeVerifier = provider.uses_pkce ? createCodeVerifier() : null;
  const url = await buildAuthorizationUrl(
    provider,
    { redirectUri: flow.redirectUri, scopes: flow.scopes, state, codeVerifier },
    options,
  );
  return { url, state, code_verifier: codeVerifier };
}
