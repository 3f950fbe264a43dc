// The Auth Service end to end: `berth control-plane` as a process, and a REAL OAuth 2 / OpenID provider (oidc-provider,
// helpers/oauth-provider.ts) on loopback. consent() plays the user on the provider's pages; the redirect it ends in is
// then followed to the control plane's callback as the user's browser would.
import assert from "node:assert/strict";
import { request } from "node:http";
import { performance } from "node:perf_hooks";
import { after, before, describe, test } from "node:test";
import {
  type Api,
  api,
  assertError,
  assertValidationError,
  type ControlPlane,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";
import {
  consent,
  LOOPBACK_PROVIDERS_ALLOWED,
  startMcpServer,
  startOAuthProvider,
  type TestClient,
  type TestMcpServer,
  type TestOAuthProvider,
} from "./helpers/oauth-provider.js";

interface Provider {
  id: string;
  provider_id: string;
  client_id: string;
  uses_pkce: boolean;
  token_endpoint_auth_method: string;
  is_dynamic_client: boolean;
  mcp_server_url: string | null;
}
interface Authenticated {
  status: string;
  url: string | null;
  auth_id: string | null;
  token: string | null;
  user_id: string | null;
  metadata: Record<string, unknown> | null;
}
interface Waited {
  status: string;
  token: string | null;
  error?: string;
}
interface TokenSummary {
  id: string;
  provider_id: string;
  scopes: string[];
  is_default: boolean;
  provider_account_label: string | null;
}

const SCOPES = ["calendar.read"];

/** A JSON POST carrying the Host header an attacker chooses (fetch always sends the real one). */
function postWithHost(url: string, host: string, headers: Record<string, string>, body: unknown) {
  return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const text = JSON.stringify(body);
    const sent = request(url, { method: "POST", headers: { ...headers, host, "content-type": "application/json" } }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("end", () =>
        resolve({ status: answer.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }),
      );
    });
    sent.on("error", reject);
    sent.end(text);
  });
}

describe("the Auth Service against a real OAuth provider", () => {
  let cp: ControlPlane;
  /** Its consent links expire after a second. */
  let brief: ControlPlane;
  let oauth: TestOAuthProvider;
  let shortLived: TestOAuthProvider;
  let mcp: TestMcpServer;
  /** A workspace with two users (keys) of its own, and another workspace. */
  let alice: Api;
  let bob: Api;
  let outsider: Api;
  let workspaceId = "";
  let aliceKeyText = "";

  const providerIds = {
    post: "cal-post",
    basic: "cal-basic",
    public: "cal-public",
    short: "cal-short",
    mcp: "mcp-docs",
    slack: "slack",
  };
  const callbackOf = (providerId: string) => `${cp.url}/v2/auth/callback/${providerId}`;

  async function register(client: Api, providerId: string, from: TestOAuthProvider, testClient: TestClient, pkce: boolean) {
    const created = await client.post<Provider>("/v2/auth/providers", {
      provider_id: providerId,
      name: `Calendar (${providerId})`,
      client_id: testClient.client_id,
      client_secret: testClient.client_secret,
      auth_url: from.authUrl,
      token_url: from.tokenUrl,
      revocation_url: from.revocationUrl,
      uses_pkce: pkce,
      token_endpoint_auth_method: testClient.token_endpoint_auth_method,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    return created.body;
  }

  /** The user's browser: consent on the provider's pages, then the redirect to the control plane's callback. */
  async function giveConsent(url: string, user = "alice"): Promise<{ callback: string; page: Response }> {
    const callback = await consent(url, { user });
    return { callback, page: await fetch(callback) };
  }

  /** authenticate → pending → consent → wait: the token. */
  async function consentRoundTrip(client: Api, providerId: string, scopes = SCOPES) {
    const started = await client.post<Authenticated>("/v2/auth/authenticate", { provider: providerId, scopes });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    assert.equal(started.body.status, "pending");
    const waiting = client.get<Waited>(`/v2/auth/wait/${started.body.auth_id}?timeout=60`);
    const { page } = await giveConsent(started.body.url!);
    assert.equal(page.status, 200, await page.clone().text());
    assert.match(await page.text(), /<h1 class="ok">Connected to /);
    const waited = await waiting;
    assert.equal(waited.body.status, "completed", JSON.stringify(waited.body));
    return { started: started.body, token: waited.body.token! };
  }

  before(async () => {
    [cp, brief] = await Promise.all([
      startControlPlane({ env: LOOPBACK_PROVIDERS_ALLOWED }),
      startControlPlane({ env: { ...LOOPBACK_PROVIDERS_ALLOWED, BERTH_AUTH_FLOW_SECONDS: "1" } }),
    ]);
    const redirectUris = [...Object.values(providerIds).map(callbackOf), `${brief.url}/v2/auth/callback/${providerIds.post}`];
    [oauth, shortLived] = await Promise.all([
      startOAuthProvider({ redirectUris }),
      startOAuthProvider({ redirectUris, accessTokenTtlSeconds: 2 }),
    ]);
    mcp = await startMcpServer({ authorizationServer: oauth.issuer });
    const workspace = await cp.createTenant(uniqueName("auth-ws"));
    const other = await cp.createTenant(uniqueName("auth-other"));
    workspaceId = workspace.id;
    const [aliceKey, bobKey, outsiderKey] = await Promise.all([
      cp.createKey({ tenants: [workspace.id], name: "alice" }),
      cp.createKey({ tenants: [workspace.id], name: "bob" }),
      cp.createKey({ tenants: [other.id], name: "outsider" }),
    ]);
    alice = api(cp.url, aliceKey.key);
    aliceKeyText = aliceKey.key;
    bob = api(cp.url, bobKey.key);
    outsider = api(cp.url, outsiderKey.key);
  });

  after(async () => {
    await Promise.all([cp?.stop(), brief?.stop()]);
    await Promise.all([oauth?.close(), shortLived?.close(), mcp?.close()]);
  });

  test("providers: created with the reference shape, never answering the client secret; unique per workspace; invisible to others", async () => {
    const created = await register(alice, providerIds.post, oauth, oauth.clients.post, true);
    assert.equal(created.provider_id, providerIds.post);
    assert.equal(created.token_endpoint_auth_method, "client_secret_post");
    assert.equal(created.is_dynamic_client, false);
    assert.ok(!("client_secret" in created), "the secret is never answered");
    const listed = await alice.get<Provider[]>("/v2/auth/providers");
    assert.deepEqual(
      listed.body.map((provider) => provider.provider_id),
      [providerIds.post],
    );
    assert.ok(!JSON.stringify(listed.body).includes(oauth.clients.post.client_secret!), "no secret in the listing");
    const again = await alice.post("/v2/auth/providers", {
      provider_id: providerIds.post,
      name: "again",
      client_id: "x",
      client_secret: "y",
      auth_url: oauth.authUrl,
      token_url: oauth.tokenUrl,
    });
    assertError(again, 409, /already exists/);
    assertValidationError(await alice.post("/v2/auth/providers", { provider_id: "x", name: "x" }), ["body", "client_id"]);
    assertError(
      await alice.post("/v2/auth/providers", {
        provider_id: "no-secret",
        name: "x",
        client_id: "x",
        auth_url: oauth.authUrl,
        token_url: oauth.tokenUrl,
      }),
      400,
      /needs a client_secret/,
    );
    assertError(await outsider.get(`/v2/auth/providers/${providerIds.post}`), 404, /not found/);
    assert.deepEqual((await outsider.get<Provider[]>("/v2/auth/providers")).body, []);
    const patched = await alice.patch<Provider>(`/v2/auth/providers/${providerIds.post}`, { name: "Calendar (cal-post)" });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assertError(await outsider.patch(`/v2/auth/providers/${providerIds.post}`, { name: "mine" }), 404, /not found/);
  });

  test("client_secret_post with PKCE: pending with the consent URL, the browser's redirect completes it, wait returns the token, and authenticate then answers it directly", async () => {
    const begun = performance.now();
    const { started, token } = await consentRoundTrip(alice, providerIds.post);
    const roundTripMs = performance.now() - begun;
    process.stdout.write(`# one consent round trip (authenticate → consent → callback → wait): ${roundTripMs.toFixed(0)} ms\n`);
    const consentUrl = new URL(started.url!);
    assert.equal(consentUrl.searchParams.get("code_challenge_method"), "S256");
    assert.ok(consentUrl.searchParams.get("code_challenge"));
    assert.equal(consentUrl.searchParams.get("redirect_uri"), callbackOf(providerIds.post));
    assert.ok(consentUrl.searchParams.get("state")!.startsWith(`${started.auth_id}.`), "the state carries the auth_id");
    assert.deepEqual(await oauth.accessToken(token), { active: true, scopes: SCOPES });

    const direct = await alice.post<Authenticated>("/v2/auth/authenticate", { provider: providerIds.post, scopes: SCOPES });
    assert.equal(direct.body.status, "completed");
    assert.equal(direct.body.token, token);
    const tokens = await alice.get<TokenSummary[]>("/v2/auth/tokens");
    assert.equal(tokens.body.length, 1);
    assert.deepEqual(tokens.body[0]!.scopes, SCOPES);
    assert.equal(tokens.body[0]!.is_default, true);
    assert.ok(!JSON.stringify(tokens.body).includes(token), "summaries never hold the token");
    assert.deepEqual((await alice.get(`/v2/auth/tokens/exists?provider_id=${providerIds.post}`)).body, { has_token: true });

    // force_new starts another consent though a token exists.
    const forced = await alice.post<Authenticated>("/v2/auth/authenticate", {
      provider: providerIds.post,
      scopes: SCOPES,
      force_new: true,
    });
    assert.equal(forced.body.status, "pending");
  });

  test("a forged Host header does not choose the redirect_uri: it is the control plane's own address", async () => {
    const forged = await postWithHost(
      `${cp.url}/v2/auth/authenticate`,
      "attacker.example:8443",
      { "x-api-key": aliceKeyText },
      { provider: providerIds.post, scopes: SCOPES, force_new: true },
    );
    assert.equal(forged.status, 200, JSON.stringify(forged.body));
    assert.equal(forged.body.status, "pending");
    const redirectUri = new URL(String(forged.body.url)).searchParams.get("redirect_uri");
    assert.equal(redirectUri, callbackOf(providerIds.post));
  });

  test("client_secret_basic without PKCE, and a public client (none) with PKCE", async () => {
    await register(alice, providerIds.basic, oauth, oauth.clients.basic, false);
    const basic = await consentRoundTrip(alice, providerIds.basic);
    assert.equal(new URL(basic.started.url!).searchParams.get("code_challenge"), null, "no PKCE");
    assert.equal((await oauth.accessToken(basic.token)).active, true);

    await register(alice, providerIds.public, oauth, oauth.clients.public, true);
    const open = await consentRoundTrip(alice, providerIds.public);
    assert.ok(new URL(open.started.url!).searchParams.get("code_challenge"));
    assert.equal((await oauth.accessToken(open.token)).active, true);
  });

  test("an expired token is refreshed before it is answered; a refresh the provider refuses answers token_expired with a new consent", async () => {
    await register(alice, providerIds.short, shortLived, shortLived.clients.post, true);
    const { token: first } = await consentRoundTrip(alice, providerIds.short);
    // Access tokens live 2 s here, inside the refresh margin: every authenticate refreshes.
    const refreshed = await alice.post<Authenticated>("/v2/auth/authenticate", { provider: providerIds.short, scopes: SCOPES });
    assert.equal(refreshed.body.status, "completed", JSON.stringify(refreshed.body));
    assert.notEqual(refreshed.body.token, first);
    assert.equal((await shortLived.accessToken(refreshed.body.token!)).active, true);

    // The user revokes the grant at the provider: the refresh fails.
    const grantId = (await shortLived.provider.AccessToken.find(refreshed.body.token!))?.grantId;
    assert.ok(grantId, "the provider knows the grant");
    await (await shortLived.provider.Grant.find(grantId))?.destroy();
    const expired = await alice.post<Authenticated>("/v2/auth/authenticate", { provider: providerIds.short, scopes: SCOPES });
    assert.equal(expired.body.status, "token_expired", JSON.stringify(expired.body));
    assert.ok(expired.body.url && expired.body.auth_id, "with a consent to start again");
  });

  test("the callback refuses a wrong, a replayed and an expired state; the provider's error is shown, not swallowed", async () => {
    const started = await alice.post<Authenticated>("/v2/auth/authenticate", {
      provider: providerIds.post,
      scopes: ["calendar.write"],
    });
    assert.equal(started.body.status, "pending");
    const callback = await consent(started.body.url!, { user: "alice" });
    const tampered = new URL(callback);
    tampered.searchParams.set("state", `${started.body.auth_id}.forged`);
    const wrong = await fetch(tampered);
    assert.equal(wrong.status, 400);
    assert.match(await wrong.text(), /Unknown or mismatched state/);
    const other = new URL(callback.replace(`/callback/${providerIds.post}`, `/callback/${providerIds.basic}`));
    assert.equal((await fetch(other)).status, 400, "another provider's callback refuses the state");

    const first = await fetch(callback);
    assert.equal(first.status, 200);
    const replay = await fetch(callback);
    assert.equal(replay.status, 400);
    assert.match(await replay.text(), /already used/);
    const relayed = await alice.post(`/v2/auth/callback/${providerIds.post}`, {
      code: new URL(callback).searchParams.get("code"),
      state: new URL(callback).searchParams.get("state"),
    });
    assertError(relayed, 400, /already used/);

    // Declined at the provider: its error reaches the page and the waiting client.
    const declined = await alice.post<Authenticated>("/v2/auth/authenticate", {
      provider: providerIds.post,
      scopes: ["calendar.write"],
      force_new: true,
    });
    const denial = await consent(declined.body.url!, { user: "alice", deny: true });
    const page = await fetch(denial);
    assert.equal(page.status, 400);
    assert.match(await page.text(), /access_denied/);
    const waited = await alice.get<Waited>(`/v2/auth/wait/${declined.body.auth_id}?timeout=5`);
    assert.equal(waited.body.status, "failed");
    assert.match(waited.body.error ?? "", /access_denied/);

    // A consent link outlives its flow (BERTH_AUTH_FLOW_SECONDS=1 on the other control plane).
    await register(brief.admin, providerIds.post, oauth, oauth.clients.post, true);
    const pending = await brief.admin.post<Authenticated>("/v2/auth/authenticate", {
      provider: providerIds.post,
      scopes: SCOPES,
    });
    const redirect = await consent(pending.body.url!, { user: "alice" });
    // wait answers timeout once the flow expired: then its state is refused.
    const timedOut = await brief.admin.get<Waited>(`/v2/auth/wait/${pending.body.auth_id}?timeout=30`);
    assert.equal(timedOut.body.status, "timeout");
    const late = await fetch(redirect);
    assert.equal(late.status, 400);
    assert.match(await late.text(), /expired/);
  });

  test("another user and another workspace see none of the tokens and cannot wait for another's consent", async () => {
    assert.deepEqual((await bob.get("/v2/auth/tokens")).body, []);
    assert.deepEqual((await bob.get(`/v2/auth/tokens/exists?provider_id=${providerIds.post}`)).body, { has_token: false });
    const bobs = await bob.post<Authenticated>("/v2/auth/authenticate", { provider: providerIds.post, scopes: SCOPES });
    assert.equal(bobs.body.status, "pending", "alice's token is not bob's");
    assertError(
      await bob.post("/v2/auth/authenticate", { provider: providerIds.post, scopes: SCOPES, user_id: "someone-else" }),
      403,
      /own user/,
    );
    const [aliceToken] = (await alice.get<TokenSummary[]>(`/v2/auth/tokens?provider_id=${providerIds.post}`)).body;
    assertError(await bob.delete(`/v2/auth/tokens/${aliceToken!.id}`), 404, /not found/);
    assertError(
      await bob.patch(`/v2/auth/tokens/${aliceToken!.id}/metadata`, { provider_account_label: "mine" }),
      404,
      /not found/,
    );
    const alicePending = await alice.post<Authenticated>("/v2/auth/authenticate", {
      provider: providerIds.post,
      scopes: SCOPES,
      force_new: true,
    });
    assert.equal((await bob.get<Waited>(`/v2/auth/wait/${alicePending.body.auth_id}?timeout=0`)).body.status, "not_found");
    assert.equal((await outsider.get<Waited>(`/v2/auth/wait/${alicePending.body.auth_id}?timeout=0`)).body.status, "not_found");
    assert.deepEqual((await outsider.get("/v2/auth/tokens")).body, []);
    assertError(await outsider.post("/v2/auth/authenticate", { provider: providerIds.post, scopes: SCOPES }), 404, /not found/);
  });

  test("agent connections: a user binds a token to an agent, whose runs then get it with no user's consent", async () => {
    const [token] = (await alice.get<TokenSummary[]>(`/v2/auth/tokens?provider_id=${providerIds.basic}`)).body;
    const agent = uniqueName("agent");
    assertError(await bob.post(`/v2/auth/agents/${agent}/connections`, { oauth_token_id: token!.id }), 404, /not found/);
    const bound = await alice.post<{ id: string; provider_id: string; created_by: string }>(
      `/v2/auth/agents/${agent}/connections`,
      {
        oauth_token_id: token!.id,
      },
    );
    assert.equal(bound.status, 201, JSON.stringify(bound.body));
    assert.equal(bound.body.provider_id, providerIds.basic);
    assertError(await alice.post(`/v2/auth/agents/${agent}/connections`, { oauth_token_id: token!.id }), 409, /already/);
    const listed = await bob.get<{ data: { id: string }[] }>(`/v2/auth/agents/${agent}/connections`);
    assert.deepEqual(
      listed.body.data.map((connection) => connection.id),
      [bound.body.id],
    );
    // Bob holds no token of this provider, but the agent's runs get alice's.
    const asAgent = await bob.post<Authenticated>("/v2/auth/authenticate", {
      provider: providerIds.basic,
      scopes: SCOPES,
      agent_id: agent,
    });
    assert.equal(asAgent.body.status, "completed", JSON.stringify(asAgent.body));
    assert.equal((await oauth.accessToken(asAgent.body.token!)).active, true);
    assert.deepEqual((await outsider.get<{ data: unknown[] }>(`/v2/auth/agents/${agent}/connections`)).body, { data: [] });
    assertError(await outsider.delete(`/v2/auth/agents/${agent}/connections/${bound.body.id}`), 404, /not found/);
    assert.equal((await alice.delete(`/v2/auth/agents/${agent}/connections/${bound.body.id}`)).status, 204);
    const unbound = await bob.post<Authenticated>("/v2/auth/authenticate", {
      provider: providerIds.basic,
      scopes: SCOPES,
      agent_id: agent,
    });
    assert.equal(unbound.body.status, "pending", "without the connection, bob must consent himself");
  });

  test("deleting a token revokes it at the provider; deleting all of a provider's tokens too", async () => {
    const [token] = (await alice.get<TokenSummary[]>(`/v2/auth/tokens?provider_id=${providerIds.post}`)).body;
    const current = await alice.post<Authenticated>("/v2/auth/authenticate", {
      provider: providerIds.post,
      scopes: SCOPES,
      token_id: token!.id,
    });
    assert.equal(current.body.status, "completed");
    const labelled = await alice.patch<TokenSummary>(`/v2/auth/tokens/${token!.id}/metadata`, { provider_account_label: "work" });
    assert.equal(labelled.body.provider_account_label, "work");
    assert.equal((await alice.delete(`/v2/auth/tokens/${token!.id}`)).status, 204);
    assert.equal((await oauth.accessToken(current.body.token!)).active, false, "revoked at the provider");
    assertError(await alice.delete(`/v2/auth/tokens/${token!.id}`), 404, /not found/);

    const { token: publicToken } = await consentRoundTrip(alice, providerIds.public, ["calendar.write"]);
    const removed = await alice.delete<{ deleted: number }>(`/v2/auth/tokens?provider_id=${providerIds.public}`);
    assert.ok(removed.body.deleted >= 1);
    assert.equal((await oauth.accessToken(publicToken)).active, false);
    assert.deepEqual((await alice.get(`/v2/auth/tokens/exists?provider_id=${providerIds.public}`)).body, { has_token: false });
  });

  test("the workspace's Slack pair: whether anyone holds a Slack token, and an admin revoking them all; the setup redirect shows a page", async () => {
    const slack = await alice.post<Provider>("/v2/auth/providers", {
      provider_id: providerIds.slack,
      name: "Slack",
      client_id: oauth.clients.post.client_id,
      client_secret: oauth.clients.post.client_secret,
      auth_url: oauth.authUrl,
      token_url: oauth.tokenUrl,
      revocation_url: oauth.revocationUrl,
      provider_type: "slack",
    });
    assert.equal(slack.status, 200, JSON.stringify(slack.body));
    assert.deepEqual((await bob.get("/v2/auth/tokens/workspace/slack/exists")).body, { has_token: false });
    const { token } = await consentRoundTrip(alice, providerIds.slack);
    assert.deepEqual((await bob.get("/v2/auth/tokens/workspace/slack/exists")).body, { has_token: true }, "workspace-wide");
    assertError(await bob.delete("/v2/auth/tokens/workspace/slack"), 403, /admin/);
    const asAdmin = api(cp.url, cp.adminKey, workspaceId);
    assert.deepEqual((await asAdmin.delete("/v2/auth/tokens/workspace/slack")).body, { deleted: 1 });
    assert.equal((await oauth.accessToken(token)).active, false, "revoked at the provider");
    assert.deepEqual((await alice.get("/v2/auth/tokens/workspace/slack/exists")).body, { has_token: false });

    const setup = await fetch(`${cp.url}/v2/auth/setup/${providerIds.slack}?installation_id=42&setup_action=install`);
    assert.equal(setup.status, 200);
    assert.match(await setup.text(), /installed[\s\S]*Installation 42/);
  });

  test("a provider the control plane cannot use is a 400 naming why, and an unreachable one a 502: never a 500", async () => {
    const base = { name: "Broken", client_id: "x", client_secret: "y", token_endpoint_auth_method: "client_secret_post" };
    await alice.post("/v2/auth/providers", {
      ...base,
      provider_id: "plain-http",
      auth_url: "http://calendar.example/authorize",
      token_url: "http://calendar.example/token",
    });
    assertError(await alice.post("/v2/auth/authenticate", { provider: "plain-http", scopes: SCOPES }), 400, /configuration/);
    // A stored token that needs a refresh from a provider that is gone.
    const gone = await startOAuthProvider({ redirectUris: [callbackOf(providerIds.short)], accessTokenTtlSeconds: 2 });
    await alice.patch(`/v2/auth/providers/${providerIds.short}`, { token_url: gone.tokenUrl, auth_url: gone.authUrl });
    await gone.close();
    const answer = await alice.post("/v2/auth/authenticate", { provider: providerIds.short, scopes: SCOPES });
    assertError(answer, 502, /OAuth provider/);
  });

  test("mcp-discover reads an MCP server's OAuth metadata and registers a client dynamically, with which a consent works", async () => {
    const discovered = await alice.post<Provider>("/v2/auth/providers/mcp-discover", {
      provider_id: providerIds.mcp,
      name: "Docs MCP",
      mcp_server_url: mcp.url,
    });
    assert.equal(discovered.status, 200, JSON.stringify(discovered.body));
    assert.equal(discovered.body.is_dynamic_client, true);
    assert.equal(discovered.body.mcp_server_url, mcp.url);
    assert.ok(discovered.body.client_id);
    const { token } = await consentRoundTrip(alice, providerIds.mcp, ["mcp"]);
    assert.equal((await oauth.accessToken(token)).active, true);
    assertError(
      await alice.post("/v2/auth/providers/mcp-discover", {
        provider_id: "nowhere",
        name: "x",
        mcp_server_url: `${cp.url}/nothing`,
      }),
      400,
      /discovery/,
    );
    assert.equal((await alice.delete(`/v2/auth/providers/${providerIds.mcp}`)).status, 200);
    assert.deepEqual((await alice.get(`/v2/auth/tokens?provider_id=${providerIds.mcp}`)).body, [], "its tokens went with it");
  });
});
