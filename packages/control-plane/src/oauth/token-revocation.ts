import * as oauth from "oauth4webapi";
import { libraryParties } from "./client-authentication.js";
import { OAuthResponseError } from "./errors.js";
import { checkUrl, libraryOptions, type OutboundOptions, talkTo } from "./outbound.js";
import type { ProviderEndpoints } from "./provider-endpoints.js";
import { providerError, readFields } from "./response-body.js";

export interface TokenRevocation {
  token: string;
  /** Helps the provider find the token faster (RFC 7009 §2.1). */
  tokenTypeHint?: "refresh_token" | "access_token";
}

/**
 * Revokes a token at the provider (RFC 7009). False when the provider has no
 * revocation endpoint (nothing to do but forget the token). Revoking a refresh
 * token usually ends the whole grant, its access tokens included.
 */
export async function revokeToken(
  provider: ProviderEndpoints,
  revocation: TokenRevocation,
  options: OutboundOptions = {},
): Promise<boolean> {
  if (!provider.revocation_url) return false;
  const url = checkUrl(provider.revocation_url, "the revocation URL", options);
  const token = checkUrl(provider.token_url, "the token URL", options);
  const endpoint = `the revocation endpoint ${url.origin}${url.pathname}`;
  const { as, client, authentication } = libraryParties(provider, { token, revocation: url });
  const additionalParameters = revocation.tokenTypeHint ? { token_type_hint: revocation.tokenTypeHint } : undefined;
  return talkTo(endpoint, async () => {
    const response = await oauth.revocationRequest(as, client, authentication, revocation.token, {
      ...libraryOptions(url, options),
      additionalParameters,
    });
    // RFC 7009 says 200; some providers answer 204. Any 2xx is success.
    if (response.status >= 200 && response.status <= 299) {
      await response.body?.cancel();
      return true;
    }
    const refused = providerError(await readFields(response), response.status, endpoint);
    throw refused ?? new OAuthResponseError(`${endpoint} answered HTTP ${response.status}`);
  });
}
