// Runs in the SQLite pass only: its subject is the listener putting deployments to sleep and waking them,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import {
  type ControlPlane,
  createDeployment,
  type Deployment,
  finalRevision,
  packFixture,
  startControlPlane,
  uploadSource,
} from "@berth/test-support";
import WebSocket from "ws";

// Scale-to-zero on local compute: a dev deployment with no request for BERTH_IDLE_SECONDS stops its agent
// server; a request through its stable URL, or a cron about to be due, starts it again; prod never sleeps.

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
interface DeploymentView {
  status: string;
  conditions: Condition[];
  source_config: { custom_url?: string | null };
}
interface TimelineEvent {
  reason: string;
  message: string;
  type: string;
}

describe("sleeping deployments", () => {
  let cp: ControlPlane;
  const dev = { id: "", revisionId: "", url: "" };
  const prod = { id: "", revisionId: "", url: "" };
  let key: Record<string, string>;

  /** An upload with a deployment_type, as the official deploy CLI creates it (the hosted dialect takes the type there). */
  async function deploy(name: string, deploymentType: string, into: typeof dev): Promise<void> {
    const deployment = await createDeployment(cp.admin, {
      name,
      source: "internal_source",
      source_config: { deployment_type: deploymentType },
      source_revision_config: {},
      secrets: [],
    });
    const objectPath = await uploadSource(cp.admin, deployment.id, packFixture("deploy-app"));
    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      revision_source: "internal_source",
      source_revision_config: { source_tarball_path: objectPath, langgraph_config_path: "langgraph.json" },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const revisionId = patched.body.latest_revision_id!;
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    into.id = deployment.id;
    into.revisionId = revisionId;
    into.url = (await view(deployment.id)).source_config.custom_url!;
  }

  async function view(deploymentId: string): Promise<DeploymentView> {
    const response = await cp.admin.get<DeploymentView>(`/v2/deployments/${deploymentId}`);
    assert.equal(response.status, 200);
    return response.body;
  }

  const sleepingOf = (deployment: DeploymentView) => deployment.conditions.find((condition) => condition.type === "Sleeping");

  async function timeline(of: typeof dev): Promise<TimelineEvent[]> {
    const response = await cp.admin.get<{ resources: TimelineEvent[] }>(
      `/v2/deployments/${of.id}/revisions/${of.revisionId}/events`,
    );
    assert.equal(response.status, 200);
    return response.body.resources;
  }

  /** Polls the API until `check` gives a value (the listener reports on its own time). */
  async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const value = await check();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await delay(100);
    }
  }

  const asleep = (of: typeof dev) =>
    until(`deployment ${of.id} sleeps`, async () => {
      const deployment = await view(of.id);
      return sleepingOf(deployment)?.status === "True" ? deployment : undefined;
    });

  async function call<T>(of: typeof dev, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const response = await fetch(`${of.url}${path}`, {
      method,
      headers: { ...key, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /** A cron on a new thread of the dev deployment. */
  async function createCron(schedule: string, content: string): Promise<{ threadId: string; cronId: string }> {
    const thread = await call<{ thread_id: string }>(dev, "POST", "/threads", {});
    const cron = await call<{ cron_id: string }>(dev, "POST", `/threads/${thread.body.thread_id}/runs/crons`, {
      assistant_id: "agent",
      schedule,
      input: { messages: [{ role: "user", content }] },
    });
    assert.equal(cron.status, 200, JSON.stringify(cron.body));
    return { threadId: thread.body.thread_id, cronId: cron.body.cron_id };
  }

  /** Waits for a run of the cron to succeed on its thread, then deletes the cron. */
  async function cronRanThenDelete({ threadId, cronId }: { threadId: string; cronId: string }): Promise<void> {
    const runs = await until("the cron's run succeeds", async () => {
      const listed = await call<{ status: string }[]>(dev, "GET", `/threads/${threadId}/runs`);
      return listed.body.some((run) => run.status === "success") ? listed.body : undefined;
    });
    assert.ok(runs.length >= 1);
    assert.equal((await call(dev, "DELETE", `/runs/crons/${cronId}`)).status, 204);
  }

  before(async () => {
    cp = await startControlPlane({ listener: true, env: { BERTH_IDLE_SECONDS: "1" } });
    key = { "x-api-key": cp.adminKey };
    await deploy("sleepy", "dev", dev);
    await deploy("always-on", "prod", prod);
  });
  after(() => cp?.stop());

  test("an idle dev deployment sleeps, and a request wakes it with its data kept", async () => {
    const thread = await call<{ thread_id: string }>(dev, "POST", "/threads", { metadata: { kept: "yes" } });
    assert.equal(thread.status, 200);
    const threadId = thread.body.thread_id;
    const run = await call<{ messages: { content: string }[] }>(dev, "POST", `/threads/${threadId}/runs/wait`, {
      assistant_id: "agent",
      input: { messages: [{ role: "user", content: "before the sleep" }] },
    });
    assert.equal(run.status, 200);

    const sleeping = await asleep(dev);
    // Asleep is not an error: the deployment stays READY, its health unknown until it wakes.
    assert.equal(sleeping.status, "READY");
    assert.match(sleepingOf(sleeping)!.message, /Asleep after \d+ s without requests/);
    const healthy = sleeping.conditions.find((condition) => condition.type === "Healthy");
    assert.deepEqual([healthy?.status, healthy?.reason], ["Unknown", "Sleeping"]);
    const slept = (await timeline(dev)).filter((event) => event.reason === "Slept");
    assert.ok(slept.length >= 1, "the revision's timeline records the sleep");
    assert.match(slept[0]!.message, /^Slept after \d+ s idle$/);

    // Several requests at once while it sleeps (a stream among them): one wake serves them all.
    const wokeBefore = (await timeline(dev)).filter((event) => event.reason === "Woke").length;
    const [read, search, stream] = await Promise.all([
      call<{ metadata: Record<string, string>; values: { messages: { content: string }[] } }>(dev, "GET", `/threads/${threadId}`),
      call<unknown[]>(dev, "POST", "/assistants/search", { graph_id: "agent" }),
      fetch(`${dev.url}/threads/${threadId}/runs/stream`, {
        method: "POST",
        headers: { ...key, "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "agent", input: { messages: [{ role: "user", content: "after" }] } }),
      }),
    ]);
    assert.equal(read.status, 200);
    assert.equal(read.body.metadata.kept, "yes");
    assert.equal(read.body.values.messages.at(-1)?.content, "hello: before the sleep");
    assert.equal(search.status, 200);
    assert.equal(stream.status, 200);
    assert.match(await stream.text(), /hello: after/);

    const woken = await until("the wake is reported", async () => {
      const deployment = await view(dev.id);
      return sleepingOf(deployment)?.status === "False" ? deployment : undefined;
    });
    assert.equal(woken.status, "READY");
    const woke = (await timeline(dev)).filter((event) => event.reason === "Woke");
    assert.equal(woke.length, wokeBefore + 1, "one wake for the requests that arrived together");
    assert.match(woke.at(-1)!.message, /^Woke for a request \(its server started in \d+ ms\)$/);
  });

  test("a prod deployment does not sleep", async () => {
    assert.equal((await call(prod, "POST", "/assistants/search", {})).status, 200);
    // Once the dev deployment, idle since after this request, has slept, prod was idle as long.
    await call(dev, "POST", "/assistants/search", {});
    await asleep(dev);
    const deployment = await view(prod.id);
    assert.equal(sleepingOf(deployment), undefined);
    assert.equal(deployment.status, "READY");
    assert.ok(!(await timeline(prod)).some((event) => event.reason === "Slept"));
  });

  test("a WebSocket handshake wakes a sleeping deployment", async () => {
    await asleep(dev);
    const wokeBefore = (await timeline(dev)).filter((event) => event.reason === "Woke").length;
    const socket = new WebSocket(`${dev.url.replace(/^http/, "ws")}/threads/${randomUUID()}/stream/events`, { headers: key });
    const firstFrame = new Promise<{ id?: number; type: string }>((resolve) =>
      socket.once("message", (data) => resolve(JSON.parse(data.toString()))),
    );
    await once(socket, "open");
    socket.send(JSON.stringify({ id: 1, method: "subscription.subscribe", params: { channels: ["values"] } }));
    const frame = await firstFrame;
    assert.deepEqual([frame.id, frame.type], [1, "success"]);
    socket.close();
    await once(socket, "close");
    const woke = (await timeline(dev)).filter((event) => event.reason === "Woke");
    assert.equal(woke.length, wokeBefore + 1);
  });

  test("a cron about to be due wakes its sleeping deployment, and its run happens", async () => {
    // Every 15 seconds: the deployment sleeps between two ticks and wakes shortly before the next.
    const cron = await createCron("*/15 * * * * *", "from the cron");
    const wokeBefore = (await timeline(dev)).filter((event) => event.reason === "Woke").length;
    await asleep(dev);
    const cronWake = await until("a cron wakes the deployment", async () => {
      const woke = (await timeline(dev)).filter((event) => event.reason === "Woke").slice(wokeBefore);
      return woke.find((event) => event.message.startsWith("Woke for a cron due at"));
    });
    assert.ok(cronWake);
    // Read once the cron woke it: the run the cron started is on the thread.
    await cronRanThenDelete(cron);
  });

  test("a run delayed by after_seconds wakes its sleeping deployment when it is due", async () => {
    const thread = await call<{ thread_id: string }>(dev, "POST", "/threads", {});
    const threadId = thread.body.thread_id;
    const delayed = await call<{ run_id: string; status: string }>(dev, "POST", `/threads/${threadId}/runs`, {
      assistant_id: "agent",
      input: { messages: [{ role: "user", content: "later" }] },
      after_seconds: 10,
    });
    assert.equal(delayed.status, 200, JSON.stringify(delayed.body));
    assert.equal(delayed.body.status, "pending");
    const wokeBefore = (await timeline(dev)).filter((event) => event.reason === "Woke").length;
    const sleeping = await asleep(dev);
    assert.match(sleepingOf(sleeping)!.message, /a delayed run wakes it before/);
    await until("the delayed run wakes the deployment", async () => {
      const woke = (await timeline(dev)).filter((event) => event.reason === "Woke").slice(wokeBefore);
      return woke.find((event) => event.message.startsWith("Woke for a delayed run due at"));
    });
    const run = await until("the delayed run succeeds", async () => {
      const read = await call<{ status: string }>(dev, "GET", `/threads/${threadId}/runs/${delayed.body.run_id}`);
      return read.body.status === "success" ? read.body : undefined;
    });
    assert.equal(run.status, "success");
  });

  /** Restarts the control plane and its listener on the same data; resolves once the listener reports the dev deployment. */
  async function restart(): Promise<DeploymentView> {
    await cp.stop();
    cp = await startControlPlane({
      listener: true,
      env: { BERTH_IDLE_SECONDS: "1" },
      dataDir: cp.dataDir,
      adminKey: cp.adminKey,
      defaultTenantId: cp.defaultTenantId,
    });
    // The restarted listener reports what runs (its router's port is new): the revision, restored asleep.
    return until("the restarted listener reports it", async () => {
      const deployment = await view(dev.id);
      return deployment.source_config.custom_url?.startsWith(cp.routerUrl!) ? deployment : undefined;
    });
  }

  /**
   * Restarts with the dev deployment asleep and sends it no request: what wakes it is the restarted listener, from what
   * it noted before the restart. The first wake after the `wokeBefore` earlier ones.
   */
  async function restartThenFirstWake(wokeBefore: number): Promise<TimelineEvent> {
    const restored = await restart();
    dev.url = restored.source_config.custom_url!;
    return until("the restarted listener wakes the deployment", async () =>
      (await timeline(dev)).filter((event) => event.reason === "Woke").at(wokeBefore),
    );
  }

  // The last three restart the control plane (and its listener).
  test("a sleeping deployment stays asleep across a listener restart, and a request wakes it", async () => {
    const thread = await call<{ thread_id: string }>(dev, "POST", "/threads", { metadata: { kept: "across" } });
    assert.equal(thread.status, 200);
    await asleep(dev);
    const wokeBefore = (await timeline(dev)).filter((event) => event.reason === "Woke").length;

    const restored = await restart();
    assert.equal(restored.status, "READY");
    assert.equal(sleepingOf(restored)?.status, "True", "no agent server started for it");
    assert.equal((await timeline(dev)).filter((event) => event.reason === "Woke").length, wokeBefore);

    dev.url = restored.source_config.custom_url!;
    const read = await call<{ metadata: Record<string, string> }>(dev, "GET", `/threads/${thread.body.thread_id}`);
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.metadata.kept, "across");
    await until("the wake is reported", async () => (sleepingOf(await view(dev.id))?.status === "False" ? true : undefined));
    const woke = (await timeline(dev)).filter((event) => event.reason === "Woke");
    assert.equal(woke.length, wokeBefore + 1);
    assert.match(woke.at(-1)!.message, /^Woke for a request/);
  });
  test("a delayed run wakes its sleeping deployment across a listener restart", async () => {
    const thread = await call<{ thread_id: string }>(dev, "POST", "/threads", {});
    const delayed = await call<{ run_id: string }>(dev, "POST", `/threads/${thread.body.thread_id}/runs`, {
      assistant_id: "agent",
      input: { messages: [{ role: "user", content: "after the restart" }] },
      after_seconds: 30,
    });
    assert.equal(delayed.status, 200, JSON.stringify(delayed.body));
    assert.match(sleepingOf(await asleep(dev))!.message, /a delayed run wakes it before/);
    const wokeBefore = (await timeline(dev)).filter((event) => event.reason === "Woke").length;

    const woke = await restartThenFirstWake(wokeBefore);
    assert.match(woke.message, /^Woke for a delayed run due at/);
    const run = await until("the delayed run succeeds", async () => {
      const read = await call<{ status: string }>(dev, "GET", `/threads/${thread.body.thread_id}/runs/${delayed.body.run_id}`);
      return read.body.status === "success" ? read.body : undefined;
    });
    assert.equal(run.status, "success");
  });

  test("a cron wakes its sleeping deployment across a listener restart", async () => {
    const cron = await createCron("*/20 * * * * *", "from the cron, after the restart");
    await asleep(dev);
    const wokeBefore = (await timeline(dev)).filter((event) => event.reason === "Woke").length;

    const woke = await restartThenFirstWake(wokeBefore);
    assert.match(woke.message, /^Woke for a cron due at/);
    await cronRanThenDelete(cron);
  });
});
