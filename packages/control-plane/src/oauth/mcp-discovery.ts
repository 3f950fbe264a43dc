import type { TokenEndpointAuthMethod } from "../storage/auth-types.js";
import { registerClient } from "./client-registration.js";
import { type DiscoveredEndpoints, ManualRegistrationRequiredError, OAuthDiscoveryError } from "./errors.js";
import { discoverAuthorizationServer, discoverProtectedResource } from "./metadata-discovery.js";
import { checkUrl, type OutboundOptions } from "./outbound.js";

export interface McpClientRequest {
  /** Our callback, registered as the client's only redirect URI. */
  redirectUri: string;
  /** Shown to the user on the provider's consent screen. Default "Berth". */
  clientName?: string;
  /** Registered as the client's scope when given. */
  scopes?: string[];
}

/** Everything needed to create a provider for an MCP server, its client registered dynamically. */
export interface DiscoveredProvider {
  issuer: string;
  /** The RFC 8707 resource indicator to send in authorization and token requests (ProviderEndpoints.resource). */
  resource: string;
  auth_url: string;
  token_url: string;
  revocation_url: string | null;
  client_id: string;
  client_secret: string | null;
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  uses_pkce: boolean;
  /** "S256" when uses_pkce, else null. */
  code_challenge_method: string | null;
  is_dynamic_client: boolean;
  /** The scopes the MCP server says it uses, a default for consent requests; empty when it names none. */
  scopes_supported: string[];
}

/**
 * Finds how to get tokens for an MCP server (MCP authorization spec): its
 * protected-resource metadata (RFC 9728), the first authorization server's
 * metadata (RFC 8414 / OIDC), then registers a client there (RFC 7591).
 * Throws ManualRegistrationRequiredError when the server offers no registration.
 */
export async function discoverMcpProvider(
  mcpServerUrl: string,
  client: McpClientRequest,
  options: OutboundOptions = {},
): Promise<DiscoveredProvider> {
  const serverUrl = checkUrl(mcpServerUrl, "the MCP server URL", options);
  const resource = await discoverProtectedResource(serverUrl, options);
  if (resource && resource.authorization_servers.length === 0)
    throw new OAuthDiscoveryError(`${resource.url} names no authorization server`);
  // Servers of the 2025-03-26 spec publish no resource metadata: their origin is their authorization server.
  const issuer = checkUrl(resource?.authorization_servers[0] ?? serverUrl.origin, "the authorization server", options);
  const as = await discoverAuthorizationServer(issuer, options).catch((error: unknown) => {
    if (resource || !(error instanceof OAuthDiscoveryError)) throw error;
    throw new OAuthDiscoveryError(
      `${serverUrl.href} publishes no OAuth metadata (neither RFC 9728 protected-resource nor authorization-server metadata at its origin)`,
    );
  });
  const endpoints = readEndpoints(as, resource?.resource ?? serverUrl.href, options);
  if (!as.registration_endpoint) throw new ManualRegistrationRequiredError(endpoints);
  const registered = await registerClient(
    as,
    { redirectUri: client.redirectUri, clientName: client.clientName ?? "Berth", scopes: client.scopes },
    options,
  );
  // A public client has only PKCE to bind the code to whoever started the flow.
  const usesPkce = endpoints.supports_pkce || registered.token_endpoint_auth_method === "none";
  return {
    issuer: endpoints.issuer,
    resource: endpoints.resource,
    auth_url: endpoints.auth_url,
    token_url: endpoints.token_url,
    revocation_url: endpoints.revocation_url,
    ...registered,
    uses_pkce: usesPkce,
    code_challenge_method: usesPkce ? "S256" : null,
    is_dynamic_client: true,
    scopes_supported: resource?.scopes_supported ?? [],
  };
}

function readEndpoints(
  as: Awaited<ReturnType<typeof discoverAuthorizationServer>>,
  resource: string,
  options: OutboundOptions,
): DiscoveredEndpoints {
  const endpoint = (value: string | undefined, name: string) => {
    if (!value) throw new OAuthDiscoveryError(`the authorization server ${as.issuer} names no ${name}`);
    return checkUrl(value, `the ${name}`, options).href;
  };
  return {
    issuer: as.issuer,
    resource,
    auth_url: endpoint(as.authorization_endpoint, "authorization_endpoint"),
    token_url: endpoint(as.token_endpoint, "token_endpoint"),
    revocation_url: as.revocation_endpoint ? endpoint(as.revocation_endpoint, "revocation_endpoint") : null,
    supports_pkce: as.code_challenge_methods_supported?.includes("S256") ?? false,
  };
}
