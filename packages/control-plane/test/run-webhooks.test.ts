// Run webhooks of a deployed project are signed by its agent servers with a secret the platform sets per deployment
// (BERTH_WEBHOOK_SECRET) and the deployment's owner reads from the API: a receiver verifies X-Berth-Signature with it.
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { createHmac, randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { api, assertError, type ControlPlane, type Deployment, startControlPlane } from "@berth/test-support";
import { deployTarball, finalRevision, packFixture } from "@berth/test-support";

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
}

interface Signing {
  deployment_id: string;
  webhook_secret: string;
  signature_header: string;
}

/** A receiver on loopback: the first request to each path, as received. */
class Receiver {
  private readonly received = new Map<string, Received>();
  private readonly waiting = new Map<string, (received: Received) => void>();
  private server?: Server;
  url = "";

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const received = { headers: request.headers, raw: Buffer.concat(chunks).toString("utf8") };
        const path = request.url ?? "";
        if (!this.received.has(path)) this.received.set(path, received);
        this.waiting.get(path)?.(received);
        response.writeHead(200).end("ok");
      });
    });
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  next(path: string): Promise<Received> {
    const already = this.received.get(path);
    if (already) return Promise.resolve(already);
    return new Promise((resolve) => this.waiting.set(path, resolve));
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/**
 * The first delivery to `path`, or a rejection with the agent server's account of the delivery
 * (GET …/runs/{id}/webhook) once it retried or failed: then it will not arrive.
 */
async function deliveryOf(receiver: Receiver, path: string, deliveryUrl: string, apiKey: string): Promise<Received> {
  let arrived: Received | undefined;
  const received = receiver.next(path).then((delivery) => (arrived = delivery));
  while (!arrived) {
    const answer = await fetch(deliveryUrl, { headers: { "x-api-key": apiKey } });
    const delivery = (await answer.json()) as { status?: string; attempts?: number };
    if (arrived) break;
    if (answer.status !== 200 || delivery.status === "failed" || (delivery.attempts ?? 0) > 1) {
      throw new Error(`the webhook did not arrive: ${answer.status} ${JSON.stringify(delivery)}`);
    }
    await Promise.race([received, new Promise((resolve) => setTimeout(resolve, 200))]);
  }
  return arrived;
}

describe("run webhooks of a deployment: signed with the secret the platform sets and the owner reads", () => {
  let cp: ControlPlane;
  const receiver = new Receiver();
  let deployment: Deployment;

  before(async () => {
    await receiver.start();
    // The receiver listens on this machine's loopback, which sandboxes reach only at the ports the operator grants.
    cp = await startControlPlane({
      listener: true,
      env: { BERTH_DRAIN_TIMEOUT_SECONDS: "2", BERTH_SANDBOX_EGRESS_ALLOW: `127.0.0.1:${new URL(receiver.url).port}` },
    });
    // Loopback is also a private address, which deployed servers refuse as a webhook target unless their project allows it.
    const config = JSON.stringify({
      graphs: { agent: "./agent.ts:graph" },
      env: { BERTH_WEBHOOK_ALLOW_PRIVATE: "1" },
    });
    const deployed = await deployTarball(cp.admin, "hooks", packFixture("deploy-app", { "langgraph.json": config }));
    const revision = await finalRevision(cp.admin, deployed.deployment.id, deployed.revisionId);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${deployed.deployment.id}`)).body;
  });
  after(async () => {
    await cp?.stop();
    await receiver.stop();
  });

  test("the delivery's X-Berth-Signature verifies with the secret GET /v2/deployments/{id}/webhook-secret answers", async () => {
    const path = `/run-done/${randomUUID()}`;
    const url = deployment.source_config.custom_url!;
    const client = new Client({ apiUrl: url, apiKey: cp.adminKey });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "hook" }] },
      webhook: `${receiver.url}${path}`,
    });
    await client.runs.join(thread.thread_id, run.run_id);
    const delivery = await deliveryOf(
      receiver,
      path,
      `${url}/threads/${thread.thread_id}/runs/${run.run_id}/webhook`,
      cp.adminKey,
    );

    const signing = await cp.admin.get<Signing>(`/v2/deployments/${deployment.id}/webhook-secret`);
    assert.equal(signing.status, 200, JSON.stringify(signing.body));
    assert.equal(signing.body.deployment_id, deployment.id);
    assert.equal(signing.body.signature_header, "X-Berth-Signature");
    assert.ok(signing.body.webhook_secret.length >= 32, "a secret of enough entropy");

    const header = delivery.headers["x-berth-signature"];
    assert.equal(typeof header, "string", `the delivery is signed: ${JSON.stringify(delivery.headers)}`);
    const fields = Object.fromEntries(
      String(header)
        .split(",")
        .map((part) => part.split("=", 2) as [string, string]),
    );
    assert.equal(fields.t, delivery.headers["x-berth-timestamp"]);
    const expected = createHmac("sha256", signing.body.webhook_secret).update(`${fields.t}.${delivery.raw}`).digest("hex");
    assert.equal(fields.v1, expected, "the signature verifies with the owner's secret");
    assert.equal((JSON.parse(delivery.raw) as { status: string }).status, "success");
  });

  test("another workspace cannot read it (404, as for an unknown deployment)", async () => {
    const other = await cp.createTenant("other");
    const outsider = api(cp.url, (await cp.createKey({ tenants: [other.id] })).key);
    assertError(await outsider.get(`/v2/deployments/${deployment.id}/webhook-secret`), 404, /not found/);
    assertError(await cp.admin.get(`/v2/deployments/${randomUUID()}/webhook-secret`), 404, /not found/);
  });
});
