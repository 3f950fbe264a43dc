// Where the control plane's changes are published: by the services that
// store them, whoever calls them (a request, the embedded listener's link,
// its branch poller), and what wakes the embedded listener.
import { externalImageBody, repoHostBody } from "@berth/test-support";
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { pino } from "pino";
import { readSettings } from "../../src/config/settings.js";
import { SecretBox } from "../../src/domain/secret-box.js";
import { DeploymentCreateRequest, DeploymentPatchRequest } from "../../src/domain/inputs/deployment.js";
import { wakeOnNewWork } from "../../src/embedded-link.js";
import { type ChangeMessage, type ChangeTopic, InProcessChangeFeed } from "../../src/services/change-feed.js";
import { createServices, type Services } from "../../src/services/index.js";
import { createSqliteStorage } from "../../src/storage/sqlite/index.js";
import type { ControlPlaneStorage } from "../../src/storage/types.js";

const EMBEDDED = { kind: "embedded" } as const;
const REPO_URL = "https://git.example.test/acme/agent.git";

describe("what the services publish on the change feed", () => {
  let dir: string;
  let storage: ControlPlaneStorage;
  let services: Services;
  const changes = new InProcessChangeFeed();
  let told: ChangeMessage[];
  const tenantId = randomUUID();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "berth-cp-changes-"));
    storage = await createSqliteStorage(dir);
    await storage.tenants.create({ id: tenantId, name: "default", created_at: new Date().toISOString() });
    told = [];
    for (const topic of ["deployment", "revision", "logs"] as const satisfies readonly ChangeTopic[])
      changes.subscribe(topic, (change) => told.push({ topic, change } as ChangeMessage));
    services = createServices({
      storage,
      box: new SecretBox(randomBytes(32)),
      changes,
      settings: readSettings({}),
      uploadsDir: join(dir, "uploads"),
      logger: pino({ level: "silent" }),
    });
  });
  after(async () => {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** What the call published, as `topic change` (deployment) or `topic kind status` (revision) lines. */
  async function published(call: () => Promise<unknown>): Promise<string[]> {
    told.length = 0;
    await call();
    return told.map(({ topic, change }) =>
      "kind" in change
        ? `${topic} ${change.kind} ${change.status}`
        : `${topic} ${"change" in change ? change.change : ""}`.trim(),
    );
  }

  const create = (name: string) => services.deployments.create(tenantId, DeploymentCreateRequest.parse(externalImageBody(name)));

  test("a deployment made, changed, given a revision, interrupted, deleted", async () => {
    assert.deepEqual(await published(() => create("made")), ["deployment created", "revision created QUEUED"]);
    const { id } = await services.deployments.list(tenantId, { limit: 10, offset: 0 }).then((page) => page.resources[0]!);
    const patch = (body: unknown) => services.deployments.patch(tenantId, id, DeploymentPatchRequest.parse(body));
    assert.deepEqual(await published(() => patch({ source_revision_config: { image_uri: "registry.local/agent:2" } })), [
      "deployment updated",
      "revision created QUEUED",
    ]);
    assert.deepEqual(await published(() => patch({ source_config: { custom_url: "https://agent.example.com" } })), [
      "deployment updated",
    ]);
    let revisionId = "";
    assert.deepEqual(await published(async () => (revisionId = (await services.deployments.createRevision(tenantId, id)).id)), [
      "deployment updated",
      "revision created QUEUED",
    ]);
    assert.deepEqual(await published(() => services.revisions.interrupt(tenantId, id, revisionId)), [
      "deployment updated",
      "revision status INTERRUPTED",
    ]);
    assert.deepEqual(await published(() => services.deployments.delete(tenantId, id, false)), ["deployment deleted"]);
  });

  test("a listener's moves, reports and log lines", async () => {
    const { id, latest_revision_id } = await create("moved");
    const api = services.listenerApi;
    assert.deepEqual(
      await published(() =>
        api.transition(EMBEDDED, latest_revision_id!, ["QUEUED"], "AWAITING_DEPLOY", "Pulling", { status: "UNKNOWN" }),
      ),
      ["deployment reported", "revision status AWAITING_DEPLOY"],
    );
    assert.deepEqual(await published(() => api.transition(EMBEDDED, latest_revision_id!, ["QUEUED"], "DEPLOYED", "late")), []);
    assert.deepEqual(await published(() => api.report(EMBEDDED, id, { status: "READY" })), ["deployment reported"]);
    const exited = { type: "Warning" as const, reason: "ServerExited", message: "The agent server exited with code 1" };
    assert.deepEqual(
      await published(() => api.recordEvent(EMBEDDED, latest_revision_id!, exited)),
      ["revision status AWAITING_DEPLOY"],
      "an event is told as a move to the status the revision keeps (the terminal's serving line)",
    );
    const line = { deployment_id: id, revision_id: latest_revision_id!, kind: "build" as const, level: "info" };
    assert.deepEqual(
      await published(() => api.appendLogs(EMBEDDED, [{ ...line, timestamp: new Date().toISOString(), message: "one" }])),
      ["logs"],
    );
  });

  test("a branch move the embedded listener saw makes a revision, and tells it there is work", async () => {
    const integrationId = randomUUID();
    await storage.integrations.create({
      id: integrationId,
      tenant_id: tenantId,
      name: "host",
      provider: "repo_host",
      installation_id: 1,
      repos: [{ id: 1, name: "agent", owner: "acme", url: REPO_URL, default_branch: "main" }],
      created_at: new Date().toISOString(),
      kind: "git",
      base_url: null,
      credentials_ciphertext: null,
      webhook_secret_ciphertext: null,
    });
    const body = repoHostBody("pushed", integrationId, REPO_URL, { build_on_push: true });
    const { id } = await services.deployments.create(tenantId, DeploymentCreateRequest.parse(body));
    const wakes: string[] = [];
    const stop = wakeOnNewWork(changes, () => wakes.push("wake"));
    assert.deepEqual(await published(() => services.listenerApi.branchMoved(EMBEDDED, id, "a".repeat(40))), [
      "deployment updated",
      "revision created QUEUED",
    ]);
    assert.deepEqual(wakes, ["wake"]);
    stop();
  });
});

describe("wakeOnNewWork: what wakes the embedded listener", () => {
  test("every deployment change but a listener's report", () => {
    const feed = new InProcessChangeFeed();
    let wakes = 0;
    const stop = wakeOnNewWork(feed, () => wakes++);
    for (const change of ["created", "updated", "deleted", "reported"] as const)
      feed.publish("deployment", { change, deployment_id: "d-1" });
    feed.publish("deployment", { change: "listener_deleted", listener_id: "l-1" });
    feed.publish("logs", { deployment_id: "d-1" });
    assert.equal(wakes, 4);
    stop();
    feed.publish("deployment", { change: "created", deployment_id: "d-2" });
    assert.equal(wakes, 4);
  });
});
