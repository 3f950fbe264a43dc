import { OAuthResponseError } from "./errors.js";
import type { ResponseFields } from "./response-body.js";

/** A token response, normalised for storage. */
export interface TokenSet {
  access_token: string;
  /** Null when the provider issued none (or, on a refresh, kept the old one: keep using it). */
  refresh_token: string | null;
  token_type: string | null;
  /** ISO time computed from `expires_in`; null when the provider gives no lifetime. */
  expires_at: string | null;
  /** The granted scopes: the response's `scope`, else the requested ones. */
  scopes: string[];
}

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : null);

/** `fields` of a successful token response as a TokenSet; `scopes` stand in when the response names none. */
export function toTokenSet(fields: ResponseFields, scopes: string[], endpoint: string, now = Date.now()): TokenSet {
  const accessToken = text(fields.access_token);
  if (!accessToken) throw new OAuthResponseError(`${endpoint} answered without an access_token`);
  // expires_in is a number by RFC 6749, but some providers send it as a string.
  const expiresIn = typeof fields.expires_in === "string" ? Number(fields.expires_in) : fields.expires_in;
  const lifetime = typeof expiresIn === "number" && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : null;
  const scope = text(fields.scope);
  // Space-delimited by RFC 6749; GitHub and Slack separate with commas, which no real scope contains.
  return {
    access_token: accessToken,
    refresh_token: text(fields.refresh_token),
    token_type: text(fields.token_type),
    expires_at: lifetime === null ? null : new Date(now + lifetime * 1000).toISOString(),
    scopes: scope ? scope.split(/[\s,]+/).filter(Boolean) : [...scopes],
  };
}
