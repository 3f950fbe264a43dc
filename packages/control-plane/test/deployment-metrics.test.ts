// A deployment's metric series: the listener reads its agent servers' /metrics every
// BERTH_METRICS_INTERVAL_SECONDS and sends the control plane the samples (in process for the
// embedded listener, over HTTP for `berth listener`); GET /v2/deployments/{id}/metrics reads
// them back as steps of the last hour or day.
import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { MetricSample } from "@berth/listener-protocol";
import { ControlPlaneError, HttpLink } from "@berth/listener";
import {
  api,
  assertError,
  assertValidationError,
  type ControlPlane,
  type Deployment,
  deployTarball,
  externalImageBody,
  finalRevision,
  packFixture,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";

type Series = (number | null)[];

type SeriesName =
  | "runs_per_minute"
  | "error_rate"
  | "latency_p50_ms"
  | "latency_p95_ms"
  | "latency_p99_ms"
  | "pending_runs"
  | "running_runs";

/** GET /v2/deployments/{id}/metrics */
type Metrics = Record<SeriesName, Series> & {
  deployment_id: string;
  window: "hour" | "day";
  step_seconds: number;
  time: string[];
  replicas: { name: string; cpu_percent: Series; memory_bytes: Series }[];
};

/** How long the series may take to show the runs (a loaded machine reads and sends slowly). */
const DEADLINE_MS = 90_000;

const FAILING_GRAPH = `import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";

/** Fails in its only node: a run that ends in error. */
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("boom", () => {
    throw new Error("boom");
  })
  .addEdge("__start__", "boom")
  .compile();
`;

const positive = (series: Series) => series.some((value) => value !== null && value > 0);

describe("deployment metrics: series of runs, latency, errors, queue and replicas", () => {
  let cp: ControlPlane;
  let deployment: Deployment;

  before(async () => {
    cp = await startControlPlane({ listener: true, env: { BERTH_METRICS_INTERVAL_SECONDS: "1" } });
    const config = JSON.stringify({ graphs: { agent: "./agent.ts:graph", fail: "./fail.ts:graph" } });
    const tarball = packFixture("deploy-app", { "langgraph.json": config, "fail.ts": FAILING_GRAPH });
    const deployed = await deployTarball(cp.admin, uniqueName("metrics"), tarball);
    const revision = await finalRevision(cp.admin, deployed.deployment.id, deployed.revisionId);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${deployed.deployment.id}`)).body;
  });
  after(() => cp?.stop());

  const read = async (window = "hour"): Promise<Metrics> => {
    const response = await cp.admin.get<Metrics>(`/v2/deployments/${deployment.id}/metrics?window=${window}`);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  };

  test("runs through the deployment's URL show as runs per minute, error rate, latencies and replica usage", async () => {
    const client = new Client({ apiUrl: deployment.source_config.custom_url!, apiKey: cp.adminKey });
    for (const text of ["one", "two", "three"]) {
      await client.runs.wait(null, "agent", { input: { messages: [{ type: "human", content: text }] } });
    }
    await client.runs.wait(null, "fail", { input: { messages: [{ type: "human", content: "boom" }] } }).catch(() => {});

    const deadline = Date.now() + DEADLINE_MS;
    let metrics = await read();
    const shown = (m: Metrics) =>
      positive(m.runs_per_minute) &&
      positive(m.error_rate) &&
      m.latency_p50_ms.some((value) => value !== null) &&
      m.replicas.some((replica) => positive(replica.memory_bytes));
    while (!shown(metrics)) {
      assert.ok(Date.now() < deadline, `the series never showed the runs: ${JSON.stringify(metrics)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      metrics = await read();
    }

    assert.equal(metrics.deployment_id, deployment.id);
    assert.equal(metrics.window, "hour");
    assert.equal(metrics.step_seconds, 60);
    for (const series of [
      metrics.time,
      metrics.runs_per_minute,
      metrics.error_rate,
      metrics.latency_p50_ms,
      metrics.latency_p95_ms,
      metrics.latency_p99_ms,
      metrics.pending_runs,
      metrics.running_runs,
    ]) {
      assert.equal(series.length, 60);
    }
    for (let step = 1; step < 60; step++) {
      assert.equal(Date.parse(metrics.time[step]!) - Date.parse(metrics.time[step - 1]!), 60_000, "one step a minute");
    }
    assert.equal(Date.parse(metrics.time[0]!) % 60_000, 0, "steps start on the minute");
    assert.ok(Date.parse(metrics.time[59]!) <= Date.now(), "the last step is the one under way");
    for (const rate of metrics.error_rate) if (rate !== null) assert.ok(rate >= 0 && rate <= 1, `error rate ${rate}`);
    for (let step = 0; step < 60; step++) {
      const [p50, p95, p99] = [metrics.latency_p50_ms[step], metrics.latency_p95_ms[step], metrics.latency_p99_ms[step]];
      if (p50 === null) continue;
      assert.ok(p50! > 0 && p50! <= p95! && p95! <= p99!, `quantiles in order: ${p50} ${p95} ${p99}`);
    }
    assert.ok(
      metrics.pending_runs.some((value) => value !== null),
      "the queue depth was seen",
    );
    const replica = metrics.replicas[0]!;
    assert.equal(replica.name, "replica-1");
    assert.equal(replica.cpu_percent.length, 60);
    assert.equal(replica.memory_bytes.length, 60);
    assert.ok(replica.cpu_percent.some((value) => value !== null && value >= 0));
  });

  test("window=day: 144 steps of ten minutes", async () => {
    const metrics = await read("day");
    assert.equal(metrics.window, "day");
    assert.equal(metrics.step_seconds, 600);
    assert.equal(metrics.time.length, 144);
    assert.equal(metrics.runs_per_minute.length, 144);
    assert.equal(Date.parse(metrics.time[0]!) % 600_000, 0);
    for (const replica of metrics.replicas) assert.equal(replica.memory_bytes.length, 144);
  });

  test("404 for an unknown deployment and for another workspace's; 422 for an unknown window", async () => {
    assertError(await cp.admin.get(`/v2/deployments/${randomUUID()}/metrics`), 404, /not found/);
    const other = await cp.createTenant(uniqueName("other"));
    const outsider = api(cp.url, (await cp.createKey({ tenants: [other.id] })).key);
    assertError(await outsider.get(`/v2/deployments/${deployment.id}/metrics`), 404, /not found/);
    assertValidationError(await cp.admin.get(`/v2/deployments/${deployment.id}/metrics?window=week`), ["query", "window"]);
  });

  test("the endpoint is in /openapi.json", async () => {
    const spec = (await (await fetch(`${cp.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    assert.ok(spec.paths["/v2/deployments/{deployment_id}/metrics"], "documented");
    assert.ok(spec.paths["/v2/listeners/{listener_id}/metrics"], "documented");
  });

  test("a `berth listener` sends samples over HTTP: kept for its deployments, dropped for others", async () => {
    const listener = (
      await cp.admin.post<{ id: string }>("/v2/listeners", { compute_type: "docker", compute_id: uniqueName("m") })
    ).body;
    // Assigned to the listener, which never runs: the deployment stays, its samples are what the test sends.
    const created = await cp.admin.post<Deployment>(
      "/v2/deployments",
      externalImageBody(uniqueName("remote"), { source_config: { listener_id: listener.id } }),
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const remote = created.body;
    const link = new HttpLink({
      controlPlaneUrl: cp.url,
      apiKey: cp.adminKey,
      listenerId: listener.id,
      tenantId: cp.defaultTenantId,
    });
    const now = new Date().toISOString();
    const sample = (deploymentId: string, replica: string): MetricSample => ({
      deployment_id: deploymentId,
      replica,
      timestamp: now,
      interval_seconds: 2,
      cpu_seconds: 0.5,
      memory_bytes: 123_456_789,
      pending_runs: 7,
      running_runs: 2,
      runs: {
        finished: { success: 3, error: 1, timeout: 0, interrupted: 0 },
        duration_ms: { le: [100, 1000], counts: [2, 4], count: 4, sum: 1200 },
      },
    });
    await link.pushMetrics([
      sample(remote.id, "replica-1"),
      // Not this listener's, and not a deployment at all: dropped, the rest kept.
      sample(deployment.id, "intruder"),
      sample(randomUUID(), "replica-1"),
    ]);

    const metrics = (await cp.admin.get<Metrics>(`/v2/deployments/${remote.id}/metrics`)).body;
    const step = metrics.time.findIndex((start) => Date.parse(start) === Math.floor(Date.parse(now) / 60_000) * 60_000);
    assert.ok(step >= 0, `the sample's minute is on the axis: ${now}`);
    assert.equal(metrics.runs_per_minute[step], 4);
    assert.equal(metrics.error_rate[step], 0.25);
    // Ranks 2, 3.8 and 3.96 of 4, interpolated in their buckets: [0, 100] and (100, 1000].
    assert.equal(metrics.latency_p50_ms[step], 100);
    assert.ok(Math.abs(metrics.latency_p95_ms[step]! - 910) < 1e-6, String(metrics.latency_p95_ms[step]));
    assert.ok(Math.abs(metrics.latency_p99_ms[step]! - 982) < 1e-6, String(metrics.latency_p99_ms[step]));
    assert.equal(metrics.pending_runs[step], 7);
    assert.equal(metrics.running_runs[step], 2);
    assert.deepEqual(
      metrics.replicas.map((replica) => [replica.name, replica.cpu_percent[step], replica.memory_bytes[step]]),
      [["replica-1", 25, 123_456_789]],
    );
    for (const other of [metrics.runs_per_minute, metrics.latency_p50_ms, metrics.pending_runs]) {
      assert.equal(other.filter((value) => value !== null).length, 1, "nothing in the other steps");
    }
    const embedded = (await read()).replicas.map((replica) => replica.name);
    assert.ok(!embedded.includes("intruder"), "another listener's deployment took no sample");

    const stranger = new HttpLink({ controlPlaneUrl: cp.url, apiKey: "berth_wrong", listenerId: listener.id });
    await assert.rejects(stranger.pushMetrics([sample(remote.id, "replica-1")]), (error: unknown) => {
      assert.ok(error instanceof ControlPlaneError);
      assert.equal(error.status, 401);
      return true;
    });
  });
});
