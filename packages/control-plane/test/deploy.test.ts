import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ControlPlane, type Deployment, type Revision, api, revisionsOf, startControlPlane } from "@berth/test-support";
import { deployTarball, finalRevision, logsOf, packFixture } from "@berth/test-support";

/** The text of the last message of a run's output. */
function lastMessage(values: unknown): string {
  const messages = (values as { messages: { content: string }[] }).messages;
  return messages[messages.length - 1]!.content;
}

describe("deploying an uploaded project", () => {
  let cp: ControlPlane;
  let deployment: Deployment;
  let firstRevision: string;
  let url: string;

  before(async () => {
    cp = await startControlPlane({ listener: true, env: { BERTH_DRAIN_TIMEOUT_SECONDS: "30" } });
    const deployed = await deployTarball(cp.admin, "chat", packFixture("deploy-app"), {
      secrets: [{ name: "GREETING", value: "first" }],
    });
    deployment = deployed.deployment;
    firstRevision = deployed.revisionId;
  });
  after(() => cp?.stop());

  test("the revision goes QUEUED → AWAITING_BUILD → BUILDING → AWAITING_DEPLOY → DEPLOYING → DEPLOYED", async () => {
    const revision = await finalRevision(cp.admin, deployment.id, firstRevision);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const events = await cp.admin.get<{ resources: { status: string; message: string }[] }>(
      `/v2/deployments/${deployment.id}/revisions/${firstRevision}/events`,
    );
    assert.deepEqual(
      events.body.resources.map((event) => event.status),
      ["QUEUED", "AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING", "DEPLOYED"],
    );
    assert.ok(events.body.resources.every((event) => event.message.length > 0));
    const current = await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`);
    assert.equal(current.body.status, "READY");
    assert.equal(current.body.active_revision_id, firstRevision);
    assert.match(current.body.source_config.custom_url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/d\/[0-9a-f-]{36}$/);
    assert.ok(current.body.image_version);
    url = current.body.source_config.custom_url!;
  });

  test("the official SDK talks to the deployment at its URL: thread, streamed run, state", async () => {
    const client = new Client({ apiUrl: url, apiKey: cp.adminKey });
    const thread = await client.threads.create();
    const chunks: string[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "hi there" }] },
      streamMode: "values",
    })) {
      chunks.push(part.event);
      if (part.event === "values" && (part.data as { messages: unknown[] }).messages.length === 2) {
        assert.equal(lastMessage(part.data), "first: hi there");
      }
    }
    assert.ok(chunks.includes("metadata") && chunks.includes("values"), chunks.join(","));
    const state = await client.threads.getState(thread.thread_id);
    assert.equal(lastMessage(state.values), "first: hi there");
  });

  test("requests need a key of the deployment's workspace; /ok does not", async () => {
    assert.equal((await fetch(`${url}/ok`)).status, 200);
    const anonymous = await fetch(`${url}/assistants/search`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    assert.equal(anonymous.status, 401);
    assert.ok(((await anonymous.json()) as { detail: string }).detail);
    const unknown = await fetch(`${url}/threads`, { method: "POST", headers: { "x-api-key": "berth_nobody" } });
    assert.equal(unknown.status, 401);
    const other = await cp.createTenant("other");
    const otherKey = await cp.createKey({ tenants: [other.id] });
    const foreign = await fetch(`${url}/threads`, { method: "POST", headers: { "x-api-key": otherKey.key } });
    assert.equal(foreign.status, 403);
    const bearer = await fetch(`${url}/threads`, { method: "POST", headers: { authorization: `Bearer ${cp.adminKey}` } });
    assert.equal(bearer.status, 200);
  });

  test("the API's docs open through the deployment URL without a key, load their assets from under it and call the API there", async () => {
    const page = await fetch(`${url}/docs`, { redirect: "manual" });
    assert.equal(page.status, 302);
    const docsUrl = new URL(page.headers.get("location")!, `${url}/docs`).href;
    assert.equal(docsUrl, `${url}/docs/`);
    const html = await (await fetch(docsUrl)).text();
    const assets = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1]!);
    assert.ok(assets.length >= 4, html);
    for (const asset of assets) {
      const assetUrl = new URL(asset, docsUrl).href;
      assert.ok(assetUrl.startsWith(`${url}/docs/`), `${asset} resolves outside the deployment: ${assetUrl}`);
      assert.equal((await fetch(assetUrl)).status, 200, assetUrl);
    }
    const specUrl = new URL("./json", docsUrl).href;
    const spec = (await (await fetch(specUrl)).json()) as { servers: { url: string }[]; components: { securitySchemes: object } };
    assert.equal(new URL(spec.servers[0]!.url, specUrl).href, `${url}/`, "Try it out calls the deployment");
    assert.deepEqual(spec.components.securitySchemes, { ApiKey: { type: "apiKey", in: "header", name: "X-Api-Key" } });
    const openapi = await fetch(`${url}/openapi.json`);
    assert.equal(openapi.status, 200);
    const document = (await openapi.json()) as { servers: { url: string }[]; paths: object };
    assert.equal(new URL(document.servers[0]!.url, `${url}/openapi.json`).href, `${url}/`);
    assert.ok("/threads" in document.paths);
  });

  test("build and server logs of the revision", async () => {
    const build = await logsOf(cp.admin, deployment.id, firstRevision, "build");
    assert.ok(
      build.some((line) => /check|graph/i.test(line.message)),
      build.map((line) => line.message).join("\n"),
    );
    const server = await logsOf(cp.admin, deployment.id, firstRevision, "deploy");
    assert.ok(
      server.some((line) => line.message.includes("agent server listening")),
      server.map((line) => line.message).join("\n"),
    );
  });

  test("the agent server answers only the router: called directly on its loopback port (as another deployment could), it is a 401", async () => {
    const server = await logsOf(cp.admin, deployment.id, firstRevision, "deploy");
    const line = server.find((entry) => entry.message.includes("agent server listening"));
    const listening = line && /http:\/\/127\.0\.0\.1:\d+/.exec(line.message)?.[0];
    assert.ok(listening, server.map((line) => line.message).join("\n"));
    const direct = await fetch(`${listening}/threads`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(direct.status, 401);
    const withWorkspaceKey = await fetch(`${listening}/threads`, {
      method: "POST",
      headers: { "x-api-key": cp.adminKey },
      body: "{}",
    });
    assert.equal(withWorkspaceKey.status, 401, "a platform key is not the server's key");
    const routed = await fetch(`${url}/threads`, {
      method: "POST",
      headers: { "x-api-key": cp.adminKey, "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(routed.status, 200);
  });

  test("new secrets: a new revision, switched under steady traffic with zero failed requests", async () => {
    const client = new Client({ apiUrl: url, apiKey: cp.adminKey });
    let stop = false;
    let failures: string[] = [];
    let completed = 0;
    const answers = new Set<string>();
    const load = async () => {
      while (!stop) {
        try {
          const output = await client.runs.wait(null, "agent", { input: { messages: [{ type: "human", content: "ping" }] } });
          answers.add(lastMessage(output));
          completed += 1;
        } catch (error) {
          failures.push(String(error));
        }
      }
    };
    const clients = Array.from({ length: 6 }, load);
    // A stream open on the old revision when the switch happens must finish there.
    const thread = await client.threads.create();
    const longStream = (async () => {
      const events: string[] = [];
      for await (const part of client.runs.stream(thread.thread_id, "slow", { input: { steps: 15 }, streamMode: "updates" })) {
        events.push(part.event);
      }
      return events;
    })();

    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      secrets: [{ name: "GREETING", value: "second" }],
    });
    assert.equal(patched.status, 200);
    const secondRevision = patched.body.latest_revision_id!;
    assert.notEqual(secondRevision, firstRevision);
    const revision = await finalRevision(cp.admin, deployment.id, secondRevision);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const replaced = await cp.admin.get<Revision>(`/v2/deployments/${deployment.id}/revisions/${firstRevision}`);
    assert.equal(replaced.body.status, "DEPLOYED", "a replaced revision keeps its status");
    const replacedBy = new RegExp(`^Replaced by revision \\d+ \\(${secondRevision}\\) at .+: no longer serving$`);
    assert.match(replaced.body.status_message ?? "", replacedBy);
    // Traffic keeps flowing to the new revision for a while after the switch.
    const before = completed;
    while (completed < before + 20)
      await client.runs.wait(null, "agent", { input: { messages: [{ type: "human", content: "x" }] } });
    stop = true;
    await Promise.all(clients);
    const streamed = await longStream;
    assert.equal(streamed.filter((event) => event === "updates").length, 15, streamed.join(","));
    assert.deepEqual(failures, []);
    assert.ok(answers.has("first: ping") && answers.has("second: ping"), [...answers].join(" | "));
    failures = [];
    const events = await cp.admin.get<{ resources: { status: string; message: string }[] }>(
      `/v2/deployments/${deployment.id}/revisions/${secondRevision}/events`,
    );
    assert.ok(
      events.body.resources.some((event) => event.status === "AWAITING_DEPLOY" && /existing build/.test(event.message)),
      "a secrets-only revision reuses the build",
    );
  });

  test("redeploy of the first revision: a new revision, no build, the first one's secrets", async () => {
    const redeployed = await cp.admin.post<Deployment>(`/v2/deployments/${deployment.id}/revisions/${firstRevision}/redeploy`);
    assert.equal(redeployed.status, 200);
    const rollback = redeployed.body.latest_revision_id!;
    const revision = await finalRevision(cp.admin, deployment.id, rollback);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const timeline = await cp.admin.get<{ resources: { status: string }[] }>(
      `/v2/deployments/${deployment.id}/revisions/${rollback}/events`,
    );
    assert.ok(!timeline.body.resources.some((event) => event.status === "BUILDING"));
    const client = new Client({ apiUrl: url, apiKey: cp.adminKey });
    const output = await client.runs.wait(null, "agent", { input: { messages: [{ type: "human", content: "back" }] } });
    assert.equal(lastMessage(output), "first: back");
    const revisions = await revisionsOf(cp.admin, deployment.id);
    const skipped = revisions[revisions.length - 1]!;
    assert.equal(skipped.status, "SKIPPED");
    const never = await cp.admin.post<{ detail: string }>(`/v2/deployments/${deployment.id}/revisions/${skipped.id}/redeploy`);
    assert.equal(never.status, 400, "revision 1 (waiting for its source, then superseded) was never deployed");
    assert.match(never.body.detail, /SKIPPED/);
  });

  test("threads outlive revisions: the deployment's database survives re-deploys", async () => {
    const client = new Client({ apiUrl: url, apiKey: cp.adminKey });
    const threads = await client.threads.search({ limit: 100 });
    assert.ok(threads.length >= 2, `threads: ${threads.length}`);
  });

  test("DELETE: 204, then the URL answers 404 and the revision list is gone", async () => {
    const deleted = await cp.admin.delete(`/v2/deployments/${deployment.id}`);
    assert.equal(deleted.status, 204);
    // Teardown is the listener's work: the URL turns 404 once it stopped the processes.
    let status = 0;
    while (status !== 404) status = (await fetch(`${url}/ok`)).status;
    const body = (await (await fetch(`${url}/threads`, { method: "POST", headers: { "x-api-key": cp.adminKey } })).json()) as {
      detail: string;
    };
    assert.match(body.detail, /not found/i);
    assert.equal((await cp.admin.get<Revision>(`/v2/deployments/${deployment.id}/revisions`)).status, 404);
  });
});

describe("a deployment URL and another workspace", () => {
  test("keys of another workspace get 403 from the router, the right workspace's key 200", async () => {
    const cp = await startControlPlane({ listener: true, env: { BERTH_ROUTER_AUTH_CACHE_SECONDS: "1" } });
    try {
      const tenant = await cp.createTenant("acme");
      const key = await cp.createKey({ tenants: [tenant.id] });
      const acme = api(cp.url, key.key, tenant.id);
      const { deployment, revisionId } = await deployTarball(acme, "acme-chat", packFixture("deploy-app"));
      assert.equal((await finalRevision(acme, deployment.id, revisionId)).status, "DEPLOYED");
      const url = (await acme.get<Deployment>(`/v2/deployments/${deployment.id}`)).body.source_config.custom_url!;
      const own = await fetch(`${url}/threads`, { method: "POST", headers: { "x-api-key": key.key } });
      assert.equal(own.status, 200);
      const defaultWorkspaceKey = await cp.createKey({ tenants: [cp.defaultTenantId] });
      const foreign = await fetch(`${url}/threads`, { method: "POST", headers: { "x-api-key": defaultWorkspaceKey.key } });
      assert.equal(foreign.status, 403);
      await cp.revokeKey(key.id);
      // A revoked key stops working once the router's short cache lapses (1 s here, 5 s by default).
      let status = 200;
      while (status === 200)
        status = (await fetch(`${url}/threads`, { method: "POST", headers: { "x-api-key": key.key } })).status;
      assert.equal(status, 403);
    } finally {
      await cp.stop();
    }
  });
});
