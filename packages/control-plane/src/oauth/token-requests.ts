import * as oauth from "oauth4webapi";
import { libraryParties } from "./client-authentication.js";
import { OAuthError } from "./errors.js";
import { checkUrl, libraryOptions, type OutboundOptions, talkTo } from "./outbound.js";
import type { ProviderEndpoints } from "./provider-endpoints.js";
import { expectFields } from "./response-body.js";
import { type TokenSet, toTokenSet } from "./token-set.js";

// oauth4webapi builds and authenticates the requests; the answers are read here
// because its response checks are a relying party's (an ID token's issuer, which
// a configured provider does not give; bearer or DPoP token types only; errors
// only as HTTP 4xx), stricter than a token broker for arbitrary providers can be.

export interface CodeExchange {
  code: string;
  /** The redirect_uri of the authorization request, repeated as RFC 6749 §4.1.3 requires. */
  redirectUri: string;
  /** The flow's PKCE verifier; required when the provider uses PKCE. */
  codeVerifier?: string | null;
  /** The scopes asked for: the result's scopes when the provider does not list the granted ones. */
  scopes: string[];
}

async function tokenRequest(
  provider: ProviderEndpoints,
  grantType: string,
  parameters: URLSearchParams,
  scopes: string[],
  options: OutboundOptions,
): Promise<TokenSet> {
  const url = checkUrl(provider.token_url, "the token URL", options);
  const endpoint = `the token endpoint ${url.origin}${url.pathname}`;
  const { as, client, authentication } = libraryParties(provider, { token: url });
  if (provider.resource) parameters.set("resource", provider.resource);
  return talkTo(endpoint, async () => {
    const response = await oauth.genericTokenEndpointRequest(
      as,
      client,
      authentication,
      grantType,
      parameters,
      libraryOptions(url, options),
    );
    return toTokenSet(await expectFields(response, endpoint), scopes, endpoint);
  });
}

/** Exchanges the authorization code of a consent (RFC 6749 §4.1.3, RFC 7636 §4.5). */
export async function exchangeAuthorizationCode(
  provider: ProviderEndpoints,
  exchange: CodeExchange,
  options: OutboundOptions = {},
): Promise<TokenSet> {
  const parameters = new URLSearchParams({ code: exchange.code, redirect_uri: exchange.redirectUri });
  if (exchange.codeVerifier) parameters.set("code_verifier", exchange.codeVerifier);
  else if (provider.uses_pkce) throw new OAuthError("the provider uses PKCE: the flow's code verifier is required");
  return tokenRequest(provider, "authorization_code", parameters, exchange.scopes, options);
}

export interface TokenRefresh {
  refreshToken: string;
  /** The token's current scopes: the result's scopes when the provider does not list them. */
  scopes: string[];
}

/**
 * Refreshes an access token (RFC 6749 §6). The result's refresh_token is null
 * when the provider did not rotate it: keep the old one. An OAuthProviderError
 * with `error === "invalid_grant"` means the refresh token is no longer valid.
 */
export async function refreshAccessToken(
  provider: ProviderEndpoints,
  refresh: TokenRefresh,
  options: OutboundOptions = {},
): Promise<TokenSet> {
  const parameters = new URLSearchParams({ refresh_token: refresh.refreshToken });
  return tokenRequest(provider, "refresh_token", parameters, refresh.scopes, options);
}
