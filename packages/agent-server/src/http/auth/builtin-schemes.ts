import { createHash, timingSafeEqual } from "node:crypto";
import { EnvError } from "@berth/service-kit";
import type { JWTPayload, JWTVerifyGetKey } from "jose";
import type { BuiltinAuthSettings, JwtAuthSettings } from "../../config/settings.js";
import type { AuthenticateResult } from "../../graphs/auth-module.js";

/** A refused credential: answered 401 with this detail. */
export class CredentialError extends Error {}

/** Who a request's credential names, or undefined when it carries none this scheme reads. */
export type BuiltinAuthenticator = (
  headers: Record<string, string | string[] | undefined>,
) => Promise<AuthenticateResult | undefined>;

interface KeyEntry {
  digest: Buffer;
  user: AuthenticateResult;
}

const digest = (text: string) => createHash("sha256").update(text).digest();

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return (Array.isArray(value) ? value[0] : value)?.trim() || undefined;
}

function bearer(headers: Record<string, string | string[] | undefined>): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(header(headers, "authorization") ?? "")?.[1];
}

/**
 * `BERTH_AUTH_API_KEYS`: a JSON object of key → identity (or `{identity,
 * permissions}`). A key is read from `Authorization: Bearer` (beside a
 * router's own key) or `X-Api-Key`, and compared as digests in constant time.
 */
function apiKeyScheme(text: string): BuiltinAuthenticator {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new EnvError("BERTH_AUTH_API_KEYS must be a JSON object of API key → identity (or {identity, permissions})");
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed) || Object.keys(parsed).length === 0)
    throw new EnvError("BERTH_AUTH_API_KEYS must be a non-empty JSON object of API key → identity");
  const entries: KeyEntry[] = Object.entries(parsed as Record<string, unknown>).map(([key, user]) => {
    const valid =
      typeof user === "string"
        ? user !== ""
        : !!user && typeof user === "object" && typeof (user as { identity?: unknown }).identity === "string";
    if (!valid || key.length < 16)
      throw new EnvError(
        "BERTH_AUTH_API_KEYS: each key needs 16 characters or more and an identity (a string or {identity, permissions})",
      );
    return { digest: digest(key), user: user as AuthenticateResult };
  });
  return async (headers) => {
    const presented = [bearer(headers), header(headers, "x-api-key")].filter((key): key is string => !!key);
    if (presented.length === 0) return undefined;
    for (const key of presented) {
      const hash = digest(key);
      const found = entries.find((entry) => timingSafeEqual(entry.digest, hash));
      if (found) return found.user;
    }
    throw new CredentialError("Invalid API key");
  };
}

/**
 * Bearer JWTs verified against a JWKS URL (`BERTH_AUTH_JWT_JWKS_URL`) or a
 * shared secret (`BERTH_AUTH_JWT_SECRET`, HMAC), with the issuer, audience,
 * expiry and clock skew checked; the identity is a claim (`sub` by default),
 * the permissions `permissions` or the space-separated `scope`.
 */
function jwtScheme({
  jwksUrl,
  secret,
  issuer,
  audience,
  clockSkewSeconds: clockTolerance,
  identityClaim,
}: JwtAuthSettings): BuiltinAuthenticator {
  if (jwksUrl && secret) throw new EnvError("Set BERTH_AUTH_JWT_JWKS_URL or BERTH_AUTH_JWT_SECRET, not both");
  // jose loads only where JWTs are configured (it starts loading now, before the first request).
  const jose = import("jose");
  let key: Promise<JWTVerifyGetKey> | Uint8Array;
  let algorithms: string[] | undefined;
  if (jwksUrl) {
    let url: URL;
    try {
      url = new URL(jwksUrl);
    } catch {
      throw new EnvError(`BERTH_AUTH_JWT_JWKS_URL is not a URL: ${jwksUrl}`);
    }
    key = jose.then(({ createRemoteJWKSet }) => createRemoteJWKSet(url));
  } else {
    if (!secret || secret.length < 32) throw new EnvError("BERTH_AUTH_JWT_SECRET needs 32 characters or more");
    key = new TextEncoder().encode(secret);
    algorithms = ["HS256", "HS384", "HS512"];
  }
  const verified = new VerifiedTokens();
  return async (headers) => {
    const token = bearer(headers);
    if (!token) return undefined;
    const known = verified.get(token);
    if (known) return known;
    let payload: JWTPayload;
    try {
      const { jwtVerify } = await jose;
      const verified =
        key instanceof Uint8Array
          ? await jwtVerify(token, key, { issuer, audience, clockTolerance, algorithms })
          : await jwtVerify(token, await key, { issuer, audience, clockTolerance });
      payload = verified.payload;
    } catch (error) {
      throw new CredentialError(`Invalid token: ${(error as Error).message}`);
    }
    const identity = payload[identityClaim];
    if (typeof identity !== "string" || identity === "") throw new CredentialError(`Invalid token: no "${identityClaim}" claim`);
    const permissions = Array.isArray(payload.permissions)
      ? payload.permissions.filter((p): p is string => typeof p === "string")
      : typeof payload.scope === "string"
        ? payload.scope.split(" ").filter(Boolean)
        : [];
    const user = { identity, permissions, claims: payload };
    verified.add(token, user, payload.exp);
    return user;
  };
}

/** How long a verified token is taken on trust again: a key removed from the JWKS stops working within this. */
const VERIFIED_TOKEN_MS = 60_000;
const VERIFIED_TOKENS_KEPT = 10_000;

/**
 * Tokens verified lately, with their users: a client sends the same token with
 * every request, and checking its signature again costs more than the rest of
 * the authentication. Kept until the token expires, at most a minute.
 */
class VerifiedTokens {
  private readonly users = new Map<string, { user: AuthenticateResult; until: number }>();

  get(token: string): AuthenticateResult | undefined {
    const entry = this.users.get(token);
    if (!entry) return undefined;
    if (entry.until > Date.now()) return entry.user;
    this.users.delete(token);
    return undefined;
  }

  add(token: string, user: AuthenticateResult, expiresAt: number | undefined): void {
    const until = Math.min(Date.now() + VERIFIED_TOKEN_MS, expiresAt === undefined ? Number.POSITIVE_INFINITY : expiresAt * 1000);
    if (this.users.size >= VERIFIED_TOKENS_KEPT) this.users.delete(this.users.keys().next().value as string);
    this.users.set(token, { user, until });
  }
}

/** The built-in schemes the settings turn on (none: undefined). Each reads its own credential; the first that finds one decides. */
export function builtinAuthenticator(settings: BuiltinAuthSettings): BuiltinAuthenticator | undefined {
  const schemes: { kind: "api-key" | "jwt"; authenticate: BuiltinAuthenticator }[] = [];
  if (settings.apiKeys) schemes.push({ kind: "api-key", authenticate: apiKeyScheme(settings.apiKeys) });
  if (settings.jwt) schemes.push({ kind: "jwt", authenticate: jwtScheme(settings.jwt) });
  if (schemes.length === 0) return undefined;
  return async (headers) => {
    const refused = new Map<string, CredentialError>();
    for (const scheme of schemes) {
      try {
        const user = await scheme.authenticate(headers);
        if (user !== undefined) return user;
      } catch (error) {
        if (!(error instanceof CredentialError)) throw error;
        refused.set(scheme.kind, error);
      }
    }
    // A token shaped like a JWT was meant for the JWT scheme: its reason is the one to give.
    const token = bearer(headers);
    const reason = (token && JWT_SHAPE.test(token) && refused.get("jwt")) || refused.values().next().value;
    if (reason) throw reason;
    return undefined;
  };
}

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;
