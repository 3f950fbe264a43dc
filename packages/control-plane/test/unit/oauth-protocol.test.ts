import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import {
  buildAuthorizationUrl,
  createCodeVerifier,
  createState,
  flowIdFromState,
  startAuthorization,
} from "../../src/oauth/authorization-request.js";
import { readAuthorizationCallback } from "../../src/oauth/authorization-response.js";
import { chooseAuthMethod } from "../../src/oauth/client-registration.js";
import {
  ManualRegistrationRequiredError,
  OAuthDiscoveryError,
  OAuthProviderError,
  OAuthResponseError,
  OAuthUrlError,
} from "../../src/oauth/errors.js";
import { discoverMcpProvider } from "../../src/oauth/mcp-discovery.js";
import { protectedResourceMetadataUrls } from "../../src/oauth/metadata-discovery.js";
import { cappedFetch, isAddressAllowed, type OutboundOptions } from "../../src/oauth/outbound.js";
import type { ProviderEndpoints } from "../../src/oauth/provider-endpoints.js";
import { exchangeAuthorizationCode, refreshAccessToken } from "../../src/oauth/token-requests.js";
import { revokeToken } from "../../src/oauth/token-revocation.js";
import { toTokenSet } from "../../src/oauth/token-set.js";
import { resourceMetadataFromChallenge } from "../../src/oauth/www-authenticate.js";
import {
  consent,
  startMcpServer,
  startOAuthProvider,
  TEST_REDIRECT_URI,
  type TestClient,
  type TestOAuthProvider,
} from "../helpers/oauth-provider.js";

// The protocol layer of the Auth Service (src/oauth) against a real OAuth 2 /
// OpenID provider (oidc-provider) on loopback, consents played by a fetch "browser".

const SCOPES = ["calendar.read"];
/** The test providers listen on loopback, which the layer refuses unless allowed (BERTH_OUTBOUND_ALLOW_PRIVATE). */
const LOOPBACK: OutboundOptions = { allowPrivate: { networks: ["127.0.0.1"] } };

function endpointsFor(idp: TestOAuthProvider, client: TestClient, usesPkce: boolean): ProviderEndpoints {
  return {
    ...client,
    auth_url: idp.authUrl,
    token_url: idp.tokenUrl,
    revocation_url: idp.revocationUrl,
    uses_pkce: usesPkce,
    code_challenge_method: usesPkce ? "S256" : null,
  };
}

/** Runs a whole consent for `provider` as `user` and returns the callback's code and the flow's verifier. */
async function consentFlow(provider: ProviderEndpoints, flowId = crypto.randomUUID(), user = "alice") {
  const started = await startAuthorization(provider, { flowId, redirectUri: TEST_REDIRECT_URI, scopes: SCOPES });
  const location = await consent(started.url, { user });
  assert.ok(location.startsWith(`${TEST_REDIRECT_URI}?`), location);
  const callback = readAuthorizationCallback(new URL(location).searchParams);
  assert.equal(callback.outcome, "code", location);
  assert.equal(callback.state, started.state);
  assert.equal(callback.flow_id, flowId);
  return { code: callback.outcome === "code" ? callback.code : "", codeVerifier: started.code_verifier };
}

async function signIn(provider: ProviderEndpoints) {
  const { code, codeVerifier } = await consentFlow(provider);
  return exchangeAuthorizationCode(provider, { code, redirectUri: TEST_REDIRECT_URI, codeVerifier, scopes: SCOPES }, LOOPBACK);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected a rejection");
}

let idp: TestOAuthProvider;
before(async () => {
  idp = await startOAuthProvider();
});
after(() => idp.close());

describe("consent URL", () => {
  test("without PKCE: code request with client, redirect, space-joined scopes and state; auth_url's own query kept", async () => {
    const provider: ProviderEndpoints = {
      client_id: "client-1",
      client_secret: "s3cret",
      auth_url: "https://provider.example/authorize?prompt=consent&access_type=offline",
      token_url: "https://provider.example/token",
      revocation_url: null,
      uses_pkce: false,
      code_challenge_method: null,
      token_endpoint_auth_method: "client_secret_basic",
    };
    const url = new URL(
      await buildAuthorizationUrl(provider, {
        redirectUri: "https://berth.example/oauth/callback",
        scopes: ["calendar.read", "calendar.write"],
        state: "flow-1.random",
      }),
    );
    assert.equal(url.origin + url.pathname, "https://provider.example/authorize");
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      prompt: "consent",
      access_type: "offline",
      response_type: "code",
      client_id: "client-1",
      redirect_uri: "https://berth.example/oauth/callback",
      scope: "calendar.read calendar.write",
      state: "flow-1.random",
    });
  });

  test("with PKCE: S256 challenge of the verifier (plain when configured), and the resource when the provider names one", async () => {
    const provider = { ...endpointsFor(idp, idp.clients.public, true), resource: "https://mcp.example/mcp" };
    const verifier = createCodeVerifier();
    assert.match(verifier, /^[A-Za-z0-9_-]{43,128}$/);
    const request = { redirectUri: TEST_REDIRECT_URI, scopes: SCOPES, state: createState("flow-2"), codeVerifier: verifier };
    const url = new URL(await buildAuthorizationUrl(provider, request));
    assert.equal(url.searchParams.get("code_challenge"), createHash("sha256").update(verifier).digest("base64url"));
    assert.equal(url.searchParams.get("code_challenge_method"), "S256");
    assert.equal(url.searchParams.get("resource"), "https://mcp.example/mcp");
    const plain = new URL(await buildAuthorizationUrl({ ...provider, code_challenge_method: "plain" }, request));
    assert.equal(plain.searchParams.get("code_challenge"), verifier);
    assert.equal(plain.searchParams.get("code_challenge_method"), "plain");
    await assert.rejects(buildAuthorizationUrl(provider, { ...request, codeVerifier: null }), /code verifier/);
  });

  test("the state carries the flow id; anything else reads as no flow", () => {
    const state = createState("3f1c2b9e-0d7a-4c1e-9a55-2b0e8f6d1c44");
    assert.equal(flowIdFromState(state), "3f1c2b9e-0d7a-4c1e-9a55-2b0e8f6d1c44");
    assert.notEqual(createState("flow"), createState("flow"));
    for (const bogus of ["", "flow", "flow.", ".random", "a.b.c", "fl ow.x"]) assert.equal(flowIdFromState(bogus), null);
    assert.throws(() => createState("a.b"), /flow id/);
  });

  test("refuses auth URLs that are not http(s), and plain http beyond loopback unless allowed", async () => {
    const provider = endpointsFor(idp, idp.clients.basic, false);
    const request = { redirectUri: TEST_REDIRECT_URI, scopes: SCOPES, state: "f.r" };
    for (const auth_url of ["javascript:alert(1)", "ftp://provider.example/auth", "http://provider.example/auth"])
      assert.ok((await rejection(buildAuthorizationUrl({ ...provider, auth_url }, request))) instanceof OAuthUrlError);
    const allowed = await buildAuthorizationUrl({ ...provider, auth_url: "http://provider.example/auth" }, request, {
      allowInsecureRequests: true,
    });
    assert.ok(allowed.startsWith("http://provider.example/auth?"));
  });
});

describe("authorization code exchange", () => {
  for (const [kind, usesPkce] of [
    ["basic", false],
    ["post", true],
    ["public", true],
  ] as const) {
    test(`${kind} client${usesPkce ? " with PKCE" : ""}: tokens that the provider honours`, async () => {
      const provider = endpointsFor(idp, idp.clients[kind], usesPkce);
      const before = Date.now();
      const tokens = await signIn(provider);
      assert.ok(tokens.access_token);
      assert.ok(tokens.refresh_token);
      assert.equal(tokens.token_type?.toLowerCase(), "bearer");
      assert.deepEqual(tokens.scopes, SCOPES);
      const expiresIn = Date.parse(tokens.expires_at ?? "") - before;
      assert.ok(expiresIn > 3590_000 && expiresIn <= 3601_000, `expires_at ${tokens.expires_at}`);
      assert.deepEqual(await idp.accessToken(tokens.access_token), { active: true, scopes: SCOPES });
    });
  }

  test("a public client must use PKCE: the provider refuses the consent request", async () => {
    const provider = endpointsFor(idp, idp.clients.public, false);
    const started = await startAuthorization(provider, { flowId: "f1", redirectUri: TEST_REDIRECT_URI, scopes: SCOPES });
    const callback = readAuthorizationCallback(new URL(await consent(started.url, { user: "alice" })).searchParams);
    assert.equal(callback.outcome, "error");
    assert.equal(callback.flow_id, "f1");
    assert.equal(callback.outcome === "error" && callback.error, "invalid_request");
  });

  test("a code with the wrong PKCE verifier is refused with invalid_grant", async () => {
    const provider = endpointsFor(idp, idp.clients.public, true);
    const { code } = await consentFlow(provider);
    const exchange = { code, redirectUri: TEST_REDIRECT_URI, codeVerifier: createCodeVerifier(), scopes: SCOPES };
    const error = await rejection(exchangeAuthorizationCode(provider, exchange, LOOPBACK));
    assert.ok(error instanceof OAuthProviderError, String(error));
    assert.equal(error.error, "invalid_grant");
    assert.equal(error.status, 400);
    await assert.rejects(
      exchangeAuthorizationCode(provider, { ...exchange, codeVerifier: null }, LOOPBACK),
      /code verifier is required/,
    );
  });

  test("a wrong client secret is the provider's invalid_client", async () => {
    const provider = { ...endpointsFor(idp, idp.clients.basic, false), client_secret: "wrong" };
    const { code } = await consentFlow(endpointsFor(idp, idp.clients.basic, false));
    const error = await rejection(
      exchangeAuthorizationCode(provider, { code, redirectUri: TEST_REDIRECT_URI, scopes: SCOPES }, LOOPBACK),
    );
    assert.ok(error instanceof OAuthProviderError);
    assert.equal(error.error, "invalid_client");
  });

  test("a declined consent comes back as error=access_denied for the flow", async () => {
    const provider = endpointsFor(idp, idp.clients.basic, false);
    const flowId = crypto.randomUUID();
    const started = await startAuthorization(provider, { flowId, redirectUri: TEST_REDIRECT_URI, scopes: SCOPES });
    const location = await consent(started.url, { user: "bob", deny: true });
    assert.ok(location.startsWith(`${TEST_REDIRECT_URI}?`), location);
    const callback = readAuthorizationCallback(new URL(location).searchParams);
    assert.equal(callback.outcome, "error");
    assert.equal(callback.outcome === "error" && callback.error, "access_denied");
    assert.equal(callback.state, started.state);
    assert.equal(callback.flow_id, flowId);
  });
});

describe("refresh and revocation", () => {
  test("a refresh yields a new, valid access token (and a rotated refresh token)", async () => {
    const provider = endpointsFor(idp, idp.clients.post, false);
    const first = await signIn(provider);
    const refreshed = await refreshAccessToken(provider, { refreshToken: first.refresh_token ?? "", scopes: ["kept"] }, LOOPBACK);
    assert.notEqual(refreshed.access_token, first.access_token);
    assert.ok(refreshed.refresh_token && refreshed.refresh_token !== first.refresh_token);
    assert.deepEqual(refreshed.scopes, SCOPES, "the provider's scope wins over the stored one");
    assert.equal((await idp.accessToken(refreshed.access_token)).active, true);
    const error = await rejection(
      refreshAccessToken(provider, { refreshToken: first.refresh_token ?? "", scopes: SCOPES }, LOOPBACK),
    );
    assert.ok(error instanceof OAuthProviderError && error.error === "invalid_grant", "a rotated-away token is spent");
  });

  test("a bogus refresh token is the typed invalid_grant", async () => {
    const provider = endpointsFor(idp, idp.clients.basic, false);
    const error = await rejection(refreshAccessToken(provider, { refreshToken: "not-a-token", scopes: SCOPES }, LOOPBACK));
    assert.ok(error instanceof OAuthProviderError, String(error));
    assert.equal(error.error, "invalid_grant");
    assert.match(error.message, /invalid_grant/);
  });

  test("a revoked refresh token cannot refresh, and its grant's access tokens die with it", async () => {
    for (const kind of ["basic", "public"] as const) {
      const provider = endpointsFor(idp, idp.clients[kind], kind === "public");
      const tokens = await signIn(provider);
      const refreshToken = tokens.refresh_token ?? "";
      assert.equal(await revokeToken(provider, { token: refreshToken, tokenTypeHint: "refresh_token" }, LOOPBACK), true);
      const error = await rejection(refreshAccessToken(provider, { refreshToken, scopes: SCOPES }, LOOPBACK));
      assert.ok(error instanceof OAuthProviderError && error.error === "invalid_grant", `${kind}: ${error}`);
      assert.equal((await idp.accessToken(tokens.access_token)).active, false);
    }
  });

  test("revoking at a provider without a revocation endpoint does nothing", async () => {
    const provider = { ...endpointsFor(idp, idp.clients.basic, false), revocation_url: null };
    const tokens = await signIn(provider);
    assert.equal(await revokeToken(provider, { token: tokens.access_token }, LOOPBACK), false);
    assert.equal((await idp.accessToken(tokens.access_token)).active, true);
  });

  test("a short-lived access token expires at expires_at and a refresh replaces it", async () => {
    const shortLived = await startOAuthProvider({ accessTokenTtlSeconds: 1 });
    try {
      const provider = endpointsFor(shortLived, shortLived.clients.basic, false);
      const tokens = await signIn(provider);
      assert.ok(Date.parse(tokens.expires_at ?? "") - Date.now() <= 1000);
      await sleep(Math.max(0, Date.parse(tokens.expires_at ?? "") - Date.now()) + 1100);
      assert.equal((await shortLived.accessToken(tokens.access_token)).active, false);
      const refreshed = await refreshAccessToken(
        provider,
        { refreshToken: tokens.refresh_token ?? "", scopes: SCOPES },
        LOOPBACK,
      );
      // A one-second token may have expired again by the time it is checked: the provider knows it, and it lives longer.
      assert.notEqual(refreshed.access_token, tokens.access_token);
      const [first, replacement] = [
        await shortLived.accessTokenExpiry(tokens.access_token),
        await shortLived.accessTokenExpiry(refreshed.access_token),
      ];
      assert.ok(first !== null && replacement !== null && replacement > first, `expires at ${replacement}, after ${first}`);
    } finally {
      await shortLived.close();
    }
  });
});

describe("token responses", () => {
  test("normalised: expires_in (number or string) to an ISO time, scope split, requested scopes as fallback", () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    assert.deepEqual(toTokenSet({ access_token: "a", token_type: "bearer", expires_in: "60" }, ["x"], "t", now), {
      access_token: "a",
      refresh_token: null,
      token_type: "bearer",
      expires_at: "2030-01-01T00:01:00.000Z",
      scopes: ["x"],
    });
    const github = toTokenSet({ access_token: "a", scope: "repo,gist", refresh_token: "r" }, [], "t", now);
    assert.deepEqual([github.scopes, github.refresh_token, github.expires_at], [["repo", "gist"], "r", null]);
    assert.throws(() => toTokenSet({ token_type: "bearer" }, [], "t"), OAuthResponseError);
  });
});

describe("MCP discovery", () => {
  test("the resource_metadata of a WWW-Authenticate challenge", () => {
    const url = "https://mcp.example/.well-known/oauth-protected-resource/mcp";
    assert.equal(resourceMetadataFromChallenge(`Bearer resource_metadata="${url}"`), url);
    assert.equal(resourceMetadataFromChallenge(`Bearer realm="mcp", error="invalid_token", resource_metadata=${url}`), url);
    assert.equal(resourceMetadataFromChallenge(`Basic realm="x", Bearer resource_metadata="${url}"`), url);
    assert.equal(resourceMetadataFromChallenge('Bearer resource_metadata="https://a.example/\\"q\\""'), 'https://a.example/"q"');
    assert.equal(resourceMetadataFromChallenge('Bearer realm="x"'), null);
    assert.equal(resourceMetadataFromChallenge(null), null);
  });

  test("the well-known metadata URLs: path-inserted, then the origin's", () => {
    const urls = (server: string) => protectedResourceMetadataUrls(new URL(server)).map(String);
    assert.deepEqual(urls("https://mcp.example/v1/mcp/"), [
      "https://mcp.example/.well-known/oauth-protected-resource/v1/mcp",
      "https://mcp.example/.well-known/oauth-protected-resource",
    ]);
    assert.deepEqual(urls("https://mcp.example"), ["https://mcp.example/.well-known/oauth-protected-resource"]);
  });

  test("the client authentication asked for at registration", () => {
    assert.equal(chooseAuthMethod(["none", "client_secret_basic", "client_secret_post"]), "client_secret_post");
    assert.equal(chooseAuthMethod(["private_key_jwt", "client_secret_basic"]), "client_secret_basic");
    assert.equal(chooseAuthMethod(undefined), "client_secret_basic");
    assert.equal(chooseAuthMethod(["none"]), "none");
    assert.equal(chooseAuthMethod(["private_key_jwt"]), null);
  });

  test("challenge → resource metadata → authorization server → dynamic client: a working provider", async () => {
    const mcp = await startMcpServer({ authorizationServer: idp.issuer });
    try {
      const discovered = await discoverMcpProvider(
        mcp.url,
        { redirectUri: TEST_REDIRECT_URI, clientName: "Berth test" },
        LOOPBACK,
      );
      assert.deepEqual(mcp.requests, ["/mcp", "/metadata/protected-resource"]);
      assert.deepEqual(
        { ...discovered, client_id: typeof discovered.client_id, client_secret: typeof discovered.client_secret },
        {
          issuer: idp.issuer,
          resource: mcp.url,
          auth_url: idp.authUrl,
          token_url: idp.tokenUrl,
          revocation_url: idp.revocationUrl,
          client_id: "string",
          client_secret: "string",
          token_endpoint_auth_method: "client_secret_post",
          uses_pkce: true,
          code_challenge_method: "S256",
          is_dynamic_client: true,
          scopes_supported: ["mcp"],
        },
      );
      const provider: ProviderEndpoints = { ...discovered };
      const { code, codeVerifier } = await consentFlow(provider);
      const tokens = await exchangeAuthorizationCode(
        provider,
        {
          code,
          redirectUri: TEST_REDIRECT_URI,
          codeVerifier,
          scopes: SCOPES,
        },
        LOOPBACK,
      );
      assert.deepEqual(await idp.accessToken(tokens.access_token), { active: true, scopes: SCOPES });
      const refreshed = await refreshAccessToken(
        provider,
        { refreshToken: tokens.refresh_token ?? "", scopes: SCOPES },
        LOOPBACK,
      );
      assert.equal((await idp.accessToken(refreshed.access_token)).active, true);
      assert.equal(await revokeToken(provider, { token: refreshed.refresh_token ?? "" }, LOOPBACK), true);
    } finally {
      await mcp.close();
    }
  });

  test("without a challenge, the well-known metadata: path-suffixed, then at the root", async () => {
    const expected = {
      path: ["/mcp", "/.well-known/oauth-protected-resource/mcp"],
      root: ["/mcp", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"],
    };
    for (const wellKnown of ["path", "root"] as const) {
      const mcp = await startMcpServer({ authorizationServer: idp.issuer, challenge: false, wellKnown });
      try {
        const discovered = await discoverMcpProvider(mcp.url, { redirectUri: TEST_REDIRECT_URI }, LOOPBACK);
        assert.deepEqual(mcp.requests, expected[wellKnown]);
        assert.equal(discovered.auth_url, idp.authUrl);
      } finally {
        await mcp.close();
      }
    }
  });

  test("an authorization server without a registration endpoint: register by hand, with what was found", async () => {
    const closed = await startOAuthProvider({ registration: false });
    const mcp = await startMcpServer({ authorizationServer: closed.issuer });
    try {
      const error = await rejection(discoverMcpProvider(mcp.url, { redirectUri: TEST_REDIRECT_URI }, LOOPBACK));
      assert.ok(error instanceof ManualRegistrationRequiredError, String(error));
      assert.match(error.message, /register a client there by hand/);
      assert.deepEqual(error.endpoints, {
        issuer: closed.issuer,
        resource: mcp.url,
        auth_url: closed.authUrl,
        token_url: closed.tokenUrl,
        revocation_url: closed.revocationUrl,
        supports_pkce: true,
      });
    } finally {
      await mcp.close();
      await closed.close();
    }
  });

  test("an authorization server that issues no secrets: a public client, with PKCE", async () => {
    const publicOnly = await startOAuthProvider({ clientAuthMethods: ["none"] });
    const mcp = await startMcpServer({ authorizationServer: publicOnly.issuer });
    try {
      const discovered = await discoverMcpProvider(mcp.url, { redirectUri: TEST_REDIRECT_URI }, LOOPBACK);
      assert.equal(discovered.token_endpoint_auth_method, "none");
      assert.equal(discovered.client_secret, null);
      assert.equal(discovered.uses_pkce, true);
      const { code, codeVerifier } = await consentFlow(discovered);
      assert.ok(codeVerifier);
      const exchange = { code, redirectUri: TEST_REDIRECT_URI, codeVerifier, scopes: SCOPES };
      const tokens = await exchangeAuthorizationCode(discovered, exchange, LOOPBACK);
      assert.equal((await publicOnly.accessToken(tokens.access_token)).active, true);
    } finally {
      await mcp.close();
      await publicOnly.close();
    }
  });

  test("a server with no OAuth metadata at all is a discovery error", async () => {
    const mcp = await startMcpServer({ authorizationServer: idp.issuer, challenge: false, wellKnown: false });
    try {
      const error = await rejection(discoverMcpProvider(mcp.url, { redirectUri: TEST_REDIRECT_URI }, LOOPBACK));
      assert.ok(error instanceof OAuthDiscoveryError, String(error));
      assert.match(error.message, /publishes no OAuth metadata/);
      assert.ok(mcp.requests.includes("/.well-known/oauth-authorization-server"), mcp.requests.join(", "));
    } finally {
      await mcp.close();
    }
  });

  test("refuses URLs that are not http(s), and plain http beyond loopback", async () => {
    for (const url of ["file:///etc/passwd", "ftp://mcp.example/mcp", "http://mcp.example/mcp", "not a url"])
      assert.ok(
        (await rejection(discoverMcpProvider(url, { redirectUri: TEST_REDIRECT_URI }, LOOPBACK))) instanceof OAuthUrlError,
      );
  });

  test("a server that does not answer in time, or answers too much, is a typed failure", async () => {
    const hostile = http.createServer((request, response) => {
      if (request.url === "/slow") return; // never answers
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ pad: "x".repeat(4096) }));
    });
    hostile.listen(0, "127.0.0.1");
    await once(hostile, "listening");
    const origin = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
    try {
      const slow = await rejection(
        discoverMcpProvider(`${origin}/slow`, { redirectUri: TEST_REDIRECT_URI }, { ...LOOPBACK, timeoutMs: 200 }),
      );
      assert.ok(slow instanceof OAuthResponseError && /did not answer in time/.test(slow.message), String(slow));
      const large = await rejection(
        discoverMcpProvider(`${origin}/mcp`, { redirectUri: TEST_REDIRECT_URI }, { ...LOOPBACK, maxResponseBytes: 1024 }),
      );
      assert.ok(large instanceof OAuthResponseError && /more than 1024 bytes/.test(large.message), String(large));
    } finally {
      hostile.closeAllConnections();
      hostile.close();
    }
  });
});

describe("private addresses", () => {
  test("loopback, private, link-local, CGNAT, unspecified and their IPv4-mapped forms are refused; public ones pass", () => {
    const refused = [
      "127.0.0.1",
      "127.8.9.10",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "100.127.255.254",
      "0.0.0.0",
      "::",
      "::1",
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:169.254.169.254",
      "::ffff:a00:1",
    ];
    for (const address of refused) assert.equal(isAddressAllowed(address, "host.example"), false, address);
    for (const address of ["8.8.8.8", "172.32.0.1", "100.128.0.1", "192.169.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
      assert.equal(isAddressAllowed(address, "host.example"), true, address);
  });

  test("the operator's allowance: everything, host names, addresses and CIDRs (IPv4-mapped forms too)", () => {
    assert.equal(isAddressAllowed("10.1.2.3", "idp.internal", { all: true }), true);
    assert.equal(isAddressAllowed("10.1.2.3", "IdP.Internal", { hosts: ["idp.internal"] }), true);
    assert.equal(isAddressAllowed("10.1.2.3", "other.internal", { hosts: ["idp.internal"] }), false);
    assert.equal(isAddressAllowed("10.1.2.3", "x", { networks: ["10.1.0.0/16"] }), true);
    assert.equal(isAddressAllowed("::ffff:10.1.2.3", "x", { networks: ["10.1.0.0/16"] }), true);
    assert.equal(isAddressAllowed("10.2.0.1", "x", { networks: ["10.1.0.0/16"] }), false);
    assert.equal(isAddressAllowed("127.0.0.1", "x", { networks: ["127.0.0.1"] }), true);
    assert.equal(isAddressAllowed("127.0.0.2", "x", { networks: ["127.0.0.1"] }), false);
    assert.equal(isAddressAllowed("fd00::5", "x", { networks: ["fd00::/8"] }), true);
  });

  test("a request is checked as it connects, by name or address literal: refused ones never reach the server", async () => {
    const reached: string[] = [];
    const server = http.createServer((request, response) => {
      reached.push(request.url ?? "");
      response.end("{}");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const port = (server.address() as AddressInfo).port;
    try {
      // `localhost` goes through the connection's lookup; the literals are checked before connecting.
      for (const url of [`http://localhost:${port}/a`, `http://127.0.0.1:${port}/b`, `http://[::ffff:127.0.0.1]:${port}/c`]) {
        const error = await rejection(cappedFetch(url, { signal: AbortSignal.timeout(5000) }));
        assert.ok(
          error instanceof OAuthUrlError && /BERTH_OUTBOUND_ALLOW_PRIVATE/.test(error.message),
          `${url}: ${String(error)}`,
        );
      }
      assert.deepEqual(reached, []);
      const allowed = await cappedFetch(`http://localhost:${port}/d`, {}, { allowPrivate: { hosts: ["localhost"] } });
      assert.equal(allowed.status, 200);
      assert.deepEqual(reached, ["/d"]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
