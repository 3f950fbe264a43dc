import type { TokenEndpointAuthMethod } from "../storage/auth-types.js";

export type { TokenEndpointAuthMethod };

/**
 * A configured OAuth 2 provider as the protocol needs it: the stored provider
 * with its client secret decrypted. Field names follow the stored record.
 */
export interface ProviderEndpoints {
  client_id: string;
  /** Plaintext; null for a public client (token_endpoint_auth_method "none"). */
  client_secret: string | null;
  auth_url: string;
  token_url: string;
  /** RFC 7009 revocation endpoint; null when the provider has none. */
  revocation_url: string | null;
  uses_pkce: boolean;
  /** "S256" or "plain"; null means S256. */
  code_challenge_method: string | null;
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  /**
   * RFC 8707 resource indicator sent with the authorization and token requests;
   * MCP servers require it (the server's URL, or the `resource` discovery returned).
   */
  resource?: string | null;
}
