import * as oauth from "oauth4webapi";
import type { TokenEndpointAuthMethod } from "../storage/auth-types.js";
import { OAuthResponseError } from "./errors.js";
import { checkUrl, libraryOptions, type OutboundOptions, talkTo } from "./outbound.js";
import { expectFields } from "./response-body.js";

export interface ClientRegistration {
  /** Our callback; the only redirect URI the client gets. */
  redirectUri: string;
  clientName: string;
  /** Registered as the client's `scope` when given. */
  scopes?: string[];
}

export interface RegisteredClient {
  client_id: string;
  client_secret: string | null;
  token_endpoint_auth_method: TokenEndpointAuthMethod;
}

const METHODS: readonly TokenEndpointAuthMethod[] = ["client_secret_post", "client_secret_basic", "none"];

/**
 * The client authentication to ask for: a secret when the server issues them
 * (post, then basic), else a public client, which must use PKCE. RFC 8414 §2:
 * a server that lists no methods supports client_secret_basic.
 */
export function chooseAuthMethod(supported: readonly string[] | undefined): TokenEndpointAuthMethod | null {
  const offered = supported ?? ["client_secret_basic"];
  return METHODS.find((method) => offered.includes(method)) ?? null;
}

/** Registers a client dynamically (RFC 7591) at `as.registration_endpoint`, which the caller checked is there. */
export async function registerClient(
  as: oauth.AuthorizationServer,
  registration: ClientRegistration,
  options: OutboundOptions = {},
): Promise<RegisteredClient> {
  const url = checkUrl(as.registration_endpoint ?? "", "the registration endpoint", options);
  const endpoint = `the registration endpoint ${url.origin}${url.pathname}`;
  const method = chooseAuthMethod(as.token_endpoint_auth_methods_supported);
  if (!method)
    throw new OAuthResponseError(
      `${as.issuer} supports none of the client authentications ${METHODS.join(", ")} at its token endpoint`,
    );
  const metadata = {
    client_name: registration.clientName,
    redirect_uris: [registration.redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: method,
    ...(registration.scopes?.length ? { scope: registration.scopes.join(" ") } : {}),
  };
  const fields = await talkTo(endpoint, async () => {
    const response = await oauth.dynamicClientRegistrationRequest(as, metadata, libraryOptions(url, options));
    // RFC 7591 says 201; some servers answer 200, so any 2xx with a client_id will do.
    return expectFields(response, endpoint);
  });
  return readRegisteredClient(fields, method, endpoint);
}

function readRegisteredClient(
  fields: Record<string, unknown>,
  requested: TokenEndpointAuthMethod,
  endpoint: string,
): RegisteredClient {
  if (typeof fields.client_id !== "string" || fields.client_id === "")
    throw new OAuthResponseError(`${endpoint} answered without a client_id`);
  const secret = typeof fields.client_secret === "string" && fields.client_secret !== "" ? fields.client_secret : null;
  // The server may grant another method than asked for; what it says is what the token endpoint will expect.
  const granted = fields.token_endpoint_auth_method ?? (secret ? requested : "none");
  if (!METHODS.includes(granted as TokenEndpointAuthMethod))
    throw new OAuthResponseError(`${endpoint} registered the client for token_endpoint_auth_method ${String(granted)}`);
  const method = granted as TokenEndpointAuthMethod;
  if (method !== "none" && !secret)
    throw new OAuthResponseError(`${endpoint} registered the client for ${method} but issued no client_secret`);
  return { client_id: fields.client_id, client_secret: method === "none" ? null : secret, token_endpoint_auth_method: method };
}
