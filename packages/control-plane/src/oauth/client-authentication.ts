import * as oauth from "oauth4webapi";
import { OAuthError } from "./errors.js";
import type { ProviderEndpoints } from "./provider-endpoints.js";

/** What oauth4webapi needs to call a provider's token and revocation endpoints. */
export interface LibraryParties {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  authentication: oauth.ClientAuth;
}

/** The client authentication the provider's token_endpoint_auth_method calls for. */
function authentication(provider: ProviderEndpoints): oauth.ClientAuth {
  const method = provider.token_endpoint_auth_method;
  if (method === "none") return oauth.None();
  if (!provider.client_secret) throw new OAuthError(`token_endpoint_auth_method ${method} needs a client secret`);
  return method === "client_secret_basic"
    ? oauth.ClientSecretBasic(provider.client_secret)
    : oauth.ClientSecretPost(provider.client_secret);
}

export function libraryParties(provider: ProviderEndpoints, endpoints: { token: URL; revocation?: URL }): LibraryParties {
  return {
    as: {
      // A configured provider has no known issuer; oauth4webapi needs one only to check ID tokens and JWTs, which this layer never asks it to.
      issuer: endpoints.token.origin,
      token_endpoint: endpoints.token.href,
      revocation_endpoint: endpoints.revocation?.href,
    },
    client: { client_id: provider.client_id },
    authentication: authentication(provider),
  };
}
