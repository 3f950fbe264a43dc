/**
 * Errors of the OAuth protocol layer. Messages are meant for the workspace's
 * admins and users: they name the endpoint and the reason, never a secret.
 */
export class OAuthError extends Error {
  override readonly name: string = "OAuthError";
}

/**
 * The provider answered with an OAuth error (RFC 6749 §5.2, RFC 7009, RFC 7591).
 * `error` is the provider's code: `invalid_grant` on a refresh means the grant is
 * gone (revoked, expired, rotated away) and the user must consent again.
 */
export class OAuthProviderError extends OAuthError {
  override readonly name: string = "OAuthProviderError";

  constructor(
    readonly error: string,
    readonly error_description: string | null,
    /** The HTTP status of the provider's answer. */
    readonly status: number,
    endpoint: string,
  ) {
    super(`${endpoint} refused the request: ${error}${error_description ? ` (${error_description})` : ""}`);
  }
}

/** The provider could not be reached, did not answer in time, or answered something that is no usable OAuth response. */
export class OAuthResponseError extends OAuthError {
  override readonly name: string = "OAuthResponseError";
}

/** A URL this layer refuses to use: not http(s), or plain http to a host that is not loopback. */
export class OAuthUrlError extends OAuthError {
  override readonly name: string = "OAuthUrlError";
}

/** Discovery found no usable protected-resource or authorization-server metadata. */
export class OAuthDiscoveryError extends OAuthError {
  override readonly name: string = "OAuthDiscoveryError";
}

/** What discovery learnt about an authorization server that offers no dynamic registration, so an admin can fill in the rest. */
export interface DiscoveredEndpoints {
  issuer: string;
  /** The RFC 8707 resource indicator of the MCP server. */
  resource: string;
  auth_url: string;
  token_url: string;
  revocation_url: string | null;
  /** Whether the authorization server lists S256 PKCE. */
  supports_pkce: boolean;
}

/** The authorization server has no registration endpoint (RFC 7591): a client must be registered there by hand. */
export class ManualRegistrationRequiredError extends OAuthError {
  override readonly name: string = "ManualRegistrationRequiredError";

  constructor(readonly endpoints: DiscoveredEndpoints) {
    super(
      `the authorization server ${endpoints.issuer} offers no dynamic client registration: ` +
        "register a client there by hand and configure the provider with its client_id (and secret)",
    );
  }
}
