// A graph served by a Berth deployment asks the Auth Service for its run's user's token with @berth/graph-auth: the
// run is interrupted with the consent URL, the user consents at a REAL OAuth provider (oidc-provider on loopback),
// and the resumed run gets the token. Processes: `berth control-plane` with its embedded listener, which runs the
// deployment as a local process.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type ControlPlane, startControlPlane, uniqueName } from "@berth/test-support";
import { deployTarball, finalRevision, packFixture } from "@berth/test-support";
import { consent, LOOPBACK_PROVIDERS_ALLOWED, startOAuthProvider, type TestOAuthProvider } from "./helpers/oauth-provider.js";

const PROVIDER = "calendar";

interface ConsentRequired {
  type: string;
  provider: string;
  url: string;
  auth_id: string;
}

describe("a graph gets its user's token from the Auth Service, interrupting the run for consent", () => {
  let cp: ControlPlane;
  let oauth: TestOAuthProvider;
  let client: Client;

  before(async () => {
    cp = await startControlPlane({ listener: true, env: LOOPBACK_PROVIDERS_ALLOWED });
    oauth = await startOAuthProvider({ redirectUris: [`${cp.url}/v2/auth/callback/${PROVIDER}`] });
    const registered = await cp.admin.post("/v2/auth/providers", {
      provider_id: PROVIDER,
      name: "Calendar",
      client_id: oauth.clients.basic.client_id,
      client_secret: oauth.clients.basic.client_secret,
      auth_url: oauth.authUrl,
      token_url: oauth.tokenUrl,
      uses_pkce: true,
      token_endpoint_auth_method: "client_secret_basic",
    });
    assert.equal(registered.status, 200, JSON.stringify(registered.body));
    const { deployment, revisionId } = await deployTarball(cp.admin, uniqueName("auth-graph"), packFixture("auth-graph"));
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const current = await cp.admin.get<{ source_config: { custom_url: string } }>(`/v2/deployments/${deployment.id}`);
    client = new Client({ apiUrl: current.body.source_config.custom_url, apiKey: cp.adminKey });
  });

  after(async () => {
    await cp?.stop();
    await oauth?.close();
  });

  test("the run interrupts with the consent URL; after the user consents, resuming it gives the graph the token", async () => {
    const config = { configurable: { user_id: "alice@example.com" } };
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, PROVIDER, { input: { provider: PROVIDER }, config });
    const state = await client.threads.getState(thread.thread_id);
    const interrupt = state.tasks.flatMap((task) => task.interrupts)[0]?.value as ConsentRequired | undefined;
    assert.equal(interrupt?.type, "berth.auth_required", JSON.stringify(state));
    assert.equal(interrupt.provider, PROVIDER);
    assert.ok(interrupt.url.startsWith(oauth.authUrl), interrupt.url);

    const callback = await consent(interrupt.url, { user: "alice" });
    const page = await fetch(callback);
    assert.equal(page.status, 200, await page.clone().text());

    const resumed = (await client.runs.wait(thread.thread_id, PROVIDER, { command: { resume: true }, config })) as {
      token?: string;
    };
    assert.ok(resumed.token, JSON.stringify(resumed));
    assert.deepEqual(await oauth.accessToken(resumed.token), { active: true, scopes: ["calendar.read"] });

    // The same user's next run gets the stored token at once; another user is asked to consent.
    const again = (await client.runs.wait(null, PROVIDER, { input: { provider: PROVIDER }, config })) as { token?: string };
    assert.equal(again.token, resumed.token);
    const otherThread = await client.threads.create();
    await client.runs.wait(otherThread.thread_id, PROVIDER, {
      input: { provider: PROVIDER },
      config: { configurable: { user_id: "bob@example.com" } },
    });
    const other = await client.threads.getState(otherThread.thread_id);
    assert.equal(other.tasks.flatMap((task) => task.interrupts).length, 1, "bob must consent himself");
  });
});
