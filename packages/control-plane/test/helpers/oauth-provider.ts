import { generateKeyPair, randomBytes } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import type Provider from "oidc-provider";
import type { Configuration, JWK } from "oidc-provider";

// A real OAuth 2 / OpenID provider (oidc-provider) on 127.0.0.1 inside the test
// process, a fetch-driven "browser" that consents through its interaction pages,
// and a loopback "MCP server" that points at it.

// oidc-provider announces its development defaults (dev interactions, the
// in-memory adapter, Node 20 being below its supported LTS) through console.warn
// and console.info. In tests those defaults are the point, so the notices go.
for (const level of ["warn", "info"] as const) {
  const original = console[level];
  console[level] = (...args: unknown[]) => {
    const first = args[0];
    if (typeof first === "string" && /oidc-provider (WARNING|NOTICE):/.test(first)) return;
    original(...args);
  };
}

/**
 * The environment a control plane needs to reach these providers: it refuses
 * loopback and private addresses unless its operator allows them.
 */
export const LOOPBACK_PROVIDERS_ALLOWED = { BERTH_OUTBOUND_ALLOW_PRIVATE: "127.0.0.1" };

/** Where the test clients are sent back to. Never fetched: consent() stops at the redirect. */
export const TEST_REDIRECT_URI = "https://berth.test/oauth/callback";

/** A client registered with the provider, in the fields a provider configuration uses. */
export interface TestClient {
  client_id: string;
  client_secret: string | null;
  token_endpoint_auth_method: "none" | "client_secret_basic" | "client_secret_post";
}

export interface TestOAuthProviderOptions {
  /** Lifetime of access tokens, in seconds (expires_in). Default 3600. */
  accessTokenTtlSeconds?: number;
  /** Dynamic client registration (RFC 7591) at /reg. Default true. */
  registration?: boolean;
  /** Whether each refresh also replaces the refresh token. Default true. */
  rotateRefreshTokens?: boolean;
  /** Redirect URIs of the static clients. Default [TEST_REDIRECT_URI]. */
  redirectUris?: string[];
  /** Non-OIDC scopes the provider grants. Default calendar.read, calendar.write, mcp. */
  scopes?: string[];
  /**
   * Token endpoint authentications the provider accepts and advertises. Default all three.
   * Static clients of the others are not registered (their `clients` entries are then unusable).
   */
  clientAuthMethods?: TestClient["token_endpoint_auth_method"][];
}

export interface TestOAuthProvider {
  issuer: string;
  authUrl: string;
  tokenUrl: string;
  revocationUrl: string;
  /** Null when registration is off. */
  registrationUrl: string | null;
  clients: { basic: TestClient; post: TestClient; public: TestClient };
  /** Whether the provider still honours an access token (known, not revoked, not expired), and its scopes. */
  accessToken(token: string): Promise<{ active: boolean; scopes: string[] }>;
  /** When the provider has an access token expire (epoch seconds; null when it does not know the token). */
  accessTokenExpiry(token: string): Promise<number | null>;
  provider: Provider;
  close(): Promise<void>;
}

let signingKey: Promise<JWK> | undefined;

/** One RSA key for every provider of the process: generating it is the slow part of a start. */
function providerSigningKey(): Promise<JWK> {
  signingKey ??= promisify(generateKeyPair)("rsa", { modulusLength: 2048 }).then(
    ({ privateKey }) => ({ ...privateKey.export({ format: "jwk" }), use: "sig", kid: "test" }) as JWK,
  );
  return signingKey;
}

function testClient(name: string, method: TestClient["token_endpoint_auth_method"]): TestClient {
  return {
    client_id: `berth-${name}`,
    client_secret: method === "none" ? null : randomBytes(24).toString("base64url"),
    token_endpoint_auth_method: method,
  };
}

async function listen(server: http.Server): Promise<string> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closeServer(server: http.Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

export async function startOAuthProvider(options: TestOAuthProviderOptions = {}): Promise<TestOAuthProvider> {
  // Imported here, not at the top, so the console filter above is in place before its import-time warning.
  const { default: OidcProvider } = await import("oidc-provider");
  const accessTokenTtl = options.accessTokenTtlSeconds ?? 3600;
  const scopes = options.scopes ?? ["calendar.read", "calendar.write", "mcp"];
  const redirectUris = options.redirectUris ?? [TEST_REDIRECT_URI];
  const authMethods = options.clientAuthMethods ?? ["client_secret_basic", "client_secret_post", "none"];
  const clients = {
    basic: testClient("basic", "client_secret_basic"),
    post: testClient("post", "client_secret_post"),
    public: testClient("public", "none"),
  };

  const server = http.createServer();
  const issuer = await listen(server);
  const configuration: Configuration = {
    clients: Object.values(clients)
      .filter((client) => authMethods.includes(client.token_endpoint_auth_method))
      .map((client) => ({
        client_id: client.client_id,
        ...(client.client_secret ? { client_secret: client.client_secret } : {}),
        token_endpoint_auth_method: client.token_endpoint_auth_method,
        redirect_uris: redirectUris,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      })),
    // Scopes the provider does not know are dropped silently from requests; without a resource
    // indicator the known ones go into a plain opaque access token.
    scopes: ["openid", "offline_access", ...scopes],
    clientAuthMethods: authMethods,
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    // By default refresh tokens need the offline_access scope, itself dropped unless prompt=consent
    // is asked for; most providers the Auth Service meets issue them on the code grant alone.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    rotateRefreshToken: options.rotateRefreshTokens ?? true,
    expiresWithSession: () => false,
    // PKCE required of public clients only, optional for confidential ones: oidc-provider's default, spelled out as the tests rely on it.
    pkce: { required: (_ctx, client) => client.clientAuthMethod === "none" },
    ttl: {
      AccessToken: accessTokenTtl,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 24 * 3600,
      Interaction: 600,
      Session: 24 * 3600,
      Grant: 24 * 3600,
    },
    features: {
      devInteractions: { enabled: true },
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      registration: { enabled: options.registration ?? true },
      // An RFC 8707 resource (MCP servers) gets an opaque token carrying any of the provider's scopes.
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: scopes.join(" "),
          accessTokenFormat: "opaque",
          accessTokenTTL: accessTokenTtl,
        }),
      },
    },
    jwks: { keys: [await providerSigningKey()] },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    clientBasedCORS: () => false,
  };
  let provider: Provider;
  try {
    provider = new OidcProvider(issuer, configuration);
  } catch (error) {
    await closeServer(server);
    throw error;
  }
  server.on("request", provider.callback());

  return {
    issuer,
    authUrl: `${issuer}/auth`,
    tokenUrl: `${issuer}/token`,
    revocationUrl: `${issuer}/token/revocation`,
    registrationUrl: (options.registration ?? true) ? `${issuer}/reg` : null,
    clients,
    async accessToken(token) {
      // find() still returns a token within the provider's clock tolerance (15 s) after it expired.
      const found = await provider.AccessToken.find(token);
      const active = found !== undefined && !found.isExpired;
      return { active, scopes: found?.scope?.split(" ").filter(Boolean) ?? [] };
    },
    async accessTokenExpiry(token) {
      return (await provider.AccessToken.find(token))?.exp ?? null;
    },
    provider,
    close: () => closeServer(server),
  };
}

/** Cookies of one browsing session on one host, by name and path; enough for oidc-provider's interaction cookies. */
class CookieJar {
  private readonly cookies = new Map<string, { name: string; value: string; path: string }>();

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const separator = pair.indexOf("=");
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      let path = "/";
      let expired = value === "";
      for (const attribute of attributes) {
        const [key, setting = ""] = attribute.split("=").map((part) => part.trim());
        if (key.toLowerCase() === "path" && setting) path = setting;
        if (key.toLowerCase() === "max-age" && Number(setting) <= 0) expired = true;
        if (key.toLowerCase() === "expires" && Date.parse(setting) <= Date.now()) expired = true;
      }
      if (expired) this.cookies.delete(`${name};${path}`);
      else this.cookies.set(`${name};${path}`, { name, value, path });
    }
  }

  header(url: URL): string {
    return [...this.cookies.values()]
      .filter(({ path }) => url.pathname === path || url.pathname.startsWith(path.endsWith("/") ? path : `${path}/`))
      .map(({ name, value }) => `${name}=${value}`)
      .join("; ");
  }
}

export interface ConsentOptions {
  /** The account to sign in as (the dev login takes any name and password). */
  user: string;
  /** Decline at the consent screen: the redirect then carries error=access_denied. */
  deny?: boolean;
}

/** The form a dev interaction page shows: where it posts and which prompt it answers. */
function readInteractionPage(html: string, page: URL) {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
  const abort = /href="([^"]*\/abort)"/.exec(html)?.[1];
  if (!action || !prompt) throw new Error(`no interaction form at ${page.href}: ${html.slice(0, 300)}`);
  return { action: new URL(action, page), prompt, abort: abort ? new URL(abort, page) : null };
}

/**
 * Plays the user: opens the consent URL, signs in and consents (or declines)
 * on the provider's pages with plain fetch and a cookie jar, and returns the
 * final redirect's Location (the client's redirect_uri with code and state, or
 * an error) without following it.
 */
export async function consent(authorizeUrl: string, options: ConsentOptions): Promise<string> {
  const jar = new CookieJar();
  const origin = new URL(authorizeUrl).origin;
  let request: { url: URL; form?: URLSearchParams } = { url: new URL(authorizeUrl) };
  for (let step = 0; step < 20; step++) {
    const { url, form } = request;
    const response = await fetch(url, {
      method: form ? "POST" : "GET",
      body: form,
      headers: { cookie: jar.header(url) },
      redirect: "manual",
    });
    jar.store(response);
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      const next = new URL(location, url);
      if (next.origin !== origin) return next.href;
      request = { url: next };
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) throw new Error(`${url.href} answered ${response.status}: ${html.slice(0, 500)}`);
    const page = readInteractionPage(html, url);
    if (page.prompt === "login")
      request = { url: page.action, form: new URLSearchParams({ prompt: "login", login: options.user, password: "x" }) };
    else if (page.prompt === "consent" && options.deny) {
      if (!page.abort) throw new Error(`no way to decline at ${url.href}`);
      request = { url: page.abort };
    } else request = { url: page.action, form: new URLSearchParams({ prompt: page.prompt }) };
  }
  throw new Error(`the consent at ${authorizeUrl} did not end in a redirect to the client`);
}

export interface TestMcpServerOptions {
  /** The issuer its metadata names as authorization server. */
  authorizationServer: string;
  /** The MCP endpoint's path. Default /mcp. */
  path?: string;
  /** Answer the MCP path with 401 and a resource_metadata challenge. Default true. */
  challenge?: boolean;
  /** Where the well-known metadata is served besides the challenge's URL: path-suffixed (default), at the origin's root, or not at all. */
  wellKnown?: "path" | "root" | false;
  scopes?: string[];
}

export interface TestMcpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:1234/mcp. */
  url: string;
  /** Paths requested, in order (to see which discovery route was taken). */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A loopback stand-in for an MCP server behind OAuth: its protected-resource
 * metadata (RFC 9728) names the authorization server, and its endpoint answers
 * 401 with a challenge pointing at that metadata.
 */
export async function startMcpServer(options: TestMcpServerOptions): Promise<TestMcpServer> {
  const path = options.path ?? "/mcp";
  const requests: string[] = [];
  let origin = "";
  const metadata = () => ({
    resource: `${origin}${path}`,
    authorization_servers: [options.authorizationServer],
    scopes_supported: options.scopes ?? ["mcp"],
    bearer_methods_supported: ["header"],
  });
  const challengeUrl = () => `${origin}/metadata/protected-resource`;
  const server = http.createServer((request, response) => {
    const requested = new URL(request.url ?? "/", origin).pathname;
    requests.push(requested);
    const wellKnown = { path: `/.well-known/oauth-protected-resource${path}`, root: "/.well-known/oauth-protected-resource" };
    const served = options.wellKnown === undefined ? wellKnown.path : options.wellKnown && wellKnown[options.wellKnown];
    if (requested === "/metadata/protected-resource" || requested === served) {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(metadata()));
    } else if (requested === path && options.challenge !== false) {
      response.writeHead(401, { "www-authenticate": `Bearer resource_metadata="${challengeUrl()}"` }).end("unauthorized");
    } else {
      response.writeHead(404).end();
    }
  });
  origin = await listen(server);
  return { url: `${origin}${path}`, requests, close: () => closeServer(server) };
}
