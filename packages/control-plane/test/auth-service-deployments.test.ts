// A deployment's Auth Service key (BERTH_AUTH_SERVICE_KEY of its processes) gets the tokens of the users who consented
// through that deployment, and the agent connections made for it; not every user of its workspace by naming them.
// Two deployments of one workspace, their keys as the control plane hands them to their listener, a REAL OAuth
// provider (oidc-provider on loopback) and its consent pages played by consent().
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Api, api, assertError, type ControlPlane, startControlPlane, uniqueName } from "@berth/test-support";
import { type DeploymentKeys, deploymentsWithKeys } from "./helpers/deployment-keys.js";
import { consent, LOOPBACK_PROVIDERS_ALLOWED, startOAuthProvider, type TestOAuthProvider } from "./helpers/oauth-provider.js";

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
}

const SCOPES = ["calendar.read"];
const PROVIDER = "calendar";
const SHARED = "calendar-shared";

describe("Auth Service: a deployment's key gets the tokens given to that deployment only", () => {
  let cp: ControlPlane;
  let oauth: TestOAuthProvider;
  let workspace: Api;
  let a: DeploymentKeys;
  let b: DeploymentKeys;
  let asA: Api;
  let asB: Api;

  before(async () => {
    cp = await startControlPlane({ env: LOOPBACK_PROVIDERS_ALLOWED });
    oauth = await startOAuthProvider({
      redirectUris: [PROVIDER, SHARED].map((id) => `${cp.url}/v2/auth/callback/${id}`),
    });
    const tenant = await cp.createTenant(uniqueName("auth-deployments"));
    workspace = api(cp.url, (await cp.createKey({ tenants: [tenant.id], name: "carol" })).key);
    for (const [provider_id, shared] of [
      [PROVIDER, false],
      [SHARED, true],
    ] as const) {
      const created = await workspace.post<{ shared_across_deployments: boolean }>("/v2/auth/providers", {
        provider_id,
        name: provider_id,
        client_id: oauth.clients.basic.client_id,
        client_secret: oauth.clients.basic.client_secret,
        auth_url: oauth.authUrl,
        token_url: oauth.tokenUrl,
        token_endpoint_auth_method: "client_secret_basic",
        ...(shared ? { shared_across_deployments: true } : {}),
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(created.body.shared_across_deployments, shared);
    }
    [a, b] = await deploymentsWithKeys(workspace, [uniqueName("agent-a"), uniqueName("agent-b")]);
    asA = api(cp.url, a!.authServiceKey);
    asB = api(cp.url, b!.authServiceKey);
  });
  after(async () => {
    await cp?.stop();
    await oauth?.close();
  });

  /** authenticate → pending → the user consents in their browser → wait: the token. */
  async function consentThrough(client: Api, body: Record<string, unknown>, user: string) {
    const started = await client.post<Authenticated>("/v2/auth/authenticate", { scopes: SCOPES, ...body });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    assert.equal(started.body.status, "pending", JSON.stringify(started.body));
    const page = await fetch(await consent(started.body.url!, { user }));
    assert.equal(page.status, 200, await page.text());
    const waited = await client.get<Waited>(`/v2/auth/wait/${started.body.auth_id}?timeout=30`);
    assert.equal(waited.body.status, "completed", JSON.stringify(waited.body));
    return { authId: started.body.auth_id!, token: waited.body.token! };
  }

  test("alice consents through A: A gets her token, B naming her is asked for a consent of its own", async () => {
    const viaA = await consentThrough(asA, { provider: PROVIDER, user_id: "alice" }, "alice");
    const again = await asA.post<Authenticated>("/v2/auth/authenticate", {
      provider: PROVIDER,
      scopes: SCOPES,
      user_id: "alice",
    });
    assert.equal(again.body.status, "completed", JSON.stringify(again.body));
    assert.equal(again.body.token, viaA.token);
    const tokenId = String(again.body.metadata?.token_id);

    const fromB = await asB.post<Authenticated>("/v2/auth/authenticate", {
      provider: PROVIDER,
      scopes: SCOPES,
      user_id: "alice",
    });
    assert.equal(fromB.status, 200, JSON.stringify(fromB.body));
    assert.equal(fromB.body.status, "pending", "B must not get the token alice gave A");
    assert.equal(fromB.body.token, null);
    // Naming A's token, or waiting on A's consent, is as for an unknown one.
    assertError(
      await asB.post("/v2/auth/authenticate", { provider: PROVIDER, scopes: SCOPES, user_id: "alice", token_id: tokenId }),
      404,
      /not found/,
    );
    assert.deepEqual((await asB.get<Waited>(`/v2/auth/wait/${viaA.authId}?timeout=0`)).body, {
      status: "not_found",
      token: null,
    });

    // When alice consents through B as well, B gets its own token; A keeps its own.
    const viaB = await consentThrough(asB, { provider: PROVIDER, user_id: "alice" }, "alice");
    assert.notEqual(viaB.token, viaA.token);
    const aStill = await asA.post<Authenticated>("/v2/auth/authenticate", {
      provider: PROVIDER,
      scopes: SCOPES,
      user_id: "alice",
    });
    assert.equal(aStill.body.token, viaA.token);
  });

  test("a provider shared across deployments gives every deployment every user's tokens", async () => {
    const viaA = await consentThrough(asA, { provider: SHARED, user_id: "dave" }, "dave");
    const fromB = await asB.post<Authenticated>("/v2/auth/authenticate", { provider: SHARED, scopes: SCOPES, user_id: "dave" });
    assert.equal(fromB.body.status, "completed", JSON.stringify(fromB.body));
    assert.equal(fromB.body.token, viaA.token);
  });

  test("an agent connection reaches a deployment's runs only when made for that deployment", async () => {
    await consentThrough(workspace, { provider: PROVIDER }, "carol");
    const [token] = (await workspace.get<{ id: string }[]>(`/v2/auth/tokens?provider_id=${PROVIDER}`)).body;
    const agent = uniqueName("agent");
    const asAgent = (client: Api) =>
      client.post<Authenticated>("/v2/auth/authenticate", { provider: PROVIDER, scopes: SCOPES, agent_id: agent });

    const forAll = await workspace.post(`/v2/auth/agents/${agent}/connections`, { oauth_token_id: token!.id });
    assert.equal(forAll.status, 201, JSON.stringify(forAll.body));
    assert.equal((await asAgent(asA)).body.status, "connection_required", "a workspace-wide connection is not a deployment's");
    assert.equal((await asAgent(workspace)).body.status, "completed");

    assertError(
      await workspace.post(`/v2/auth/agents/${uniqueName("other")}/connections`, {
        oauth_token_id: token!.id,
        deployment_id: "00000000-0000-4000-8000-000000000000",
      }),
      404,
      /Deployment .* not found/,
    );
    const other = uniqueName("agent");
    const forB = await workspace.post<{ deployment_id: string }>(`/v2/auth/agents/${other}/connections`, {
      oauth_token_id: token!.id,
      deployment_id: b.deployment.id,
    });
    assert.equal(forB.status, 201, JSON.stringify(forB.body));
    assert.equal(forB.body.deployment_id, b.deployment.id);
    const body = { provider: PROVIDER, scopes: SCOPES, agent_id: other };
    const fromB = await asB.post<Authenticated>("/v2/auth/authenticate", body);
    assert.equal(fromB.body.status, "completed", JSON.stringify(fromB.body));
    assert.equal((await oauth.accessToken(fromB.body.token!)).active, true);
    assert.equal((await asA.post<Authenticated>("/v2/auth/authenticate", body)).body.status, "connection_required");
  });
});
