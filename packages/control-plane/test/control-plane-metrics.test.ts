import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type Api,
  api,
  assertError,
  type ControlPlane,
  createDeployment,
  type Deployment,
  deployTarball,
  finalRevision,
  type Page,
  packFixture,
  readJsonResponse,
  type Revision,
  revisionsOf,
  startControlPlane,
} from "@berth/test-support";

/** One sample of the exposition: `name{labels} value`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: -?\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES = ["_bucket", "_sum", "_count", "_total", ""];

/**
 * Parses the Prometheus text format (version 0.0.4) strictly enough to catch
 * what a scraper refuses: every sample well formed, of a family declared by
 * a `# TYPE` line before it, each family's TYPE given once.
 */
function parseExposition(text: string): Sample[] {
  assert.ok(text.endsWith("\n"), "the exposition ends with a line feed");
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const [, keyword, name, rest] = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line) ?? [];
      assert.ok(keyword && NAME.test(name!), `a comment line: ${line}`);
      if (keyword === "TYPE") {
        assert.ok(TYPES.has(rest!), `a known type: ${line}`);
        assert.ok(!types.has(name!), `one TYPE per family: ${line}`);
        types.set(name!, rest!);
      }
      continue;
    }
    const match = SAMPLE.exec(line);
    assert.ok(match, `a sample line: ${line}`);
    const [, name, labelText = "", valueText] = match;
    const labels: Record<string, string> = {};
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < labelText.length) {
      const label = LABEL.exec(labelText);
      assert.ok(label, `labels of: ${line}`);
      labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    const value = valueText === "+Inf" ? Infinity : valueText === "-Inf" ? -Infinity : Number(valueText);
    // prom-client writes NaN as "Nan" (an event-loop lag with no sample yet); Prometheus reads either case.
    assert.ok(valueText!.toLowerCase() === "nan" || !Number.isNaN(value), `a number: ${line}`);
    const family = SUFFIXES.map((suffix) => (name!.endsWith(suffix) ? name!.slice(0, name!.length - suffix.length) : ""))
      .filter((base) => base && types.has(base))
      .at(0);
    assert.ok(family ?? types.has(name!), `a declared family: ${line}`);
    samples.push({ name: name!, labels, value });
  }
  return samples;
}

/** The value of the one sample of `name` whose labels include `labels`. */
function sampleValue(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  const found = samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  assert.ok(found.length <= 1, `one sample of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** GET `path` with the headers given (e.g. a bearer token, as Prometheus sends). */
async function scrape(base: string, path: string, headers: Record<string, string>) {
  const response = await fetch(`${base}${path}`, { headers });
  const text = await response.text();
  return { status: response.status, contentType: response.headers.get("content-type") ?? "", text };
}

/** Every deployment of the workspace (the tests make a handful). */
async function deploymentsOf(client: Api): Promise<Deployment[]> {
  const response = await client.get<Page<Deployment>>("/v2/deployments?limit=100");
  assert.equal(response.status, 200);
  return response.body.resources;
}

describe("the control plane's own Prometheus metrics", () => {
  let cp: ControlPlane;
  let other: { client: Api; key: string };
  let deployed: Deployment;
  let samples: Sample[];

  before(async () => {
    cp = await startControlPlane({ listener: true });
    const tenant = await cp.createTenant("metrics-other");
    const key = await cp.createKey({ tenants: [tenant.id] });
    other = { client: api(cp.url, key.key), key: key.key };
    // A built deployment in the default workspace, and one waiting for its upload in another.
    const { deployment, revisionId } = await deployTarball(cp.admin, "metrics-app", packFixture("deploy-app"));
    await createDeployment(other.client, {
      name: "waiting",
      source: "internal_source",
      source_config: {},
      source_revision_config: { graph_config_path: "langgraph.json" },
      secrets: [],
    });
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    deployed = (await cp.admin.get<Deployment>(`/api-host/v2/deployments/${deployment.id}`)).body;
    // Two workspaces: the admin key needs no X-Tenant-Id here, as a scrape sends only the bearer token.
    const scraped = await scrape(cp.url, "/metrics", { Authorization: `Bearer ${cp.adminKey}` });
    assert.equal(scraped.status, 200, scraped.text);
    assert.match(scraped.contentType, /^text\/plain; version=0\.0\.4/);
    samples = parseExposition(scraped.text);
  });
  after(() => cp?.stop());

  test("deployments and revisions by status are counted across workspaces", async () => {
    const statuses = async () => {
      const deployments: Deployment[] = [];
      const revisions: Revision[] = [];
      for (const client of [cp.admin, other.client]) {
        const listed = await deploymentsOf(client);
        deployments.push(...listed);
        for (const deployment of listed) revisions.push(...(await revisionsOf(client, deployment.id)));
      }
      return { deployments: deployments.map((d) => d.status).sort(), revisions: revisions.map((r) => r.status).sort() };
    };
    // A status may move while the test reads (a health check of a loaded machine): the scrape is compared with what the
    // API listed just before and just after it, once both agree.
    let listed = await statuses();
    let scraped: Sample[] = [];
    for (let attempt = 0; attempt < 20; attempt++) {
      const answer = await scrape(cp.url, "/metrics", { Authorization: `Bearer ${cp.adminKey}` });
      scraped = parseExposition(answer.text);
      const after = await statuses();
      if (JSON.stringify(after) === JSON.stringify(listed)) break;
      listed = after;
    }
    const count = (values: string[]) =>
      values.reduce((counts, status) => counts.set(status, (counts.get(status) ?? 0) + 1), new Map<string, number>());
    const byStatus = count(listed.deployments);
    assert.equal(listed.deployments.length, 2, "the built deployment and the one waiting for its upload");
    for (const status of ["AWAITING_DATABASE", "READY", "UNUSED", "AWAITING_DELETE", "UNKNOWN"]) {
      assert.equal(sampleValue(scraped, "berth_control_plane_deployments", { status }), byStatus.get(status) ?? 0, status);
    }
    const revisionsByStatus = count(listed.revisions);
    assert.ok(revisionsByStatus.has("DEPLOYED") && revisionsByStatus.has("CREATING"));
    for (const status of ["CREATING", "QUEUED", "BUILDING", "DEPLOYED", "SKIPPED", "BUILD_FAILED"]) {
      assert.equal(sampleValue(scraped, "berth_control_plane_revisions", { status }), revisionsByStatus.get(status) ?? 0, status);
    }
  });

  test("a finished build is counted, with its duration", () => {
    assert.ok((sampleValue(samples, "berth_control_plane_builds_total", { result: "succeeded" }) ?? 0) >= 1);
    const count = sampleValue(samples, "berth_control_plane_build_duration_seconds_count", { result: "succeeded" }) ?? 0;
    assert.ok(count >= 1, `build_duration_seconds_count is ${count}`);
    const sum = sampleValue(samples, "berth_control_plane_build_duration_seconds_sum", { result: "succeeded" }) ?? 0;
    assert.ok(sum > 0, `build_duration_seconds_sum is ${sum}`);
    assert.equal(
      sampleValue(samples, "berth_control_plane_build_duration_seconds_bucket", { result: "succeeded", le: "+Inf" }),
      count,
    );
  });

  test("API latencies are labelled with the route template, never a raw id", async () => {
    const requests = samples.filter((sample) => sample.name === "berth_control_plane_http_request_duration_seconds_count");
    assert.ok(
      requests.some(
        (sample) =>
          sample.labels.route === "/v2/deployments" && sample.labels.method === "POST" && sample.labels.status_code === "201",
      ),
      JSON.stringify(requests.map((sample) => sample.labels)),
    );
    // Under /api-host too, as the template without the prefix.
    assert.ok(
      requests.some((sample) => sample.labels.route === "/v2/deployments/:deployment_id" && sample.labels.method === "GET"),
    );
    assert.ok(!requests.some((sample) => sample.labels.route!.includes(deployed.id)));

    const missing = await cp.admin.get(`/v2/no-such-route/${deployed.id}`);
    assert.equal(missing.status, 404);
    const after404 = parseExposition((await scrape(cp.url, "/api-host/metrics", { "X-Api-Key": cp.adminKey })).text);
    const unmatched = after404.filter(
      (sample) =>
        sample.name === "berth_control_plane_http_request_duration_seconds_count" && sample.labels.status_code === "404",
    );
    assert.deepEqual(
      unmatched.map((sample) => sample.labels.route),
      ["unmatched"],
    );
  });

  test("Node's process metrics come on the same registry, prefixed", () => {
    assert.ok((sampleValue(samples, "berth_control_plane_process_cpu_user_seconds_total", {}) ?? -1) >= 0);
    assert.ok(samples.some((sample) => sample.name === "berth_control_plane_nodejs_heap_size_used_bytes"));
  });

  test("only a key that reaches every workspace may read them", async () => {
    assertError(
      await readJsonResponse(await fetch(`${cp.url}/metrics`, { headers: { Authorization: `Bearer ${other.key}` } })),
      403,
      /admin key/,
    );
    assertError(await readJsonResponse(await fetch(`${cp.url}/metrics`)), 401, /Missing API key/);
    assertError(
      await readJsonResponse(await fetch(`${cp.url}/metrics`, { headers: { Authorization: "Bearer not-a-key" } })),
      401,
      "Invalid API key",
    );
    const operator = await cp.createKey({ allTenants: true, name: "prometheus" });
    const scraped = await scrape(cp.url, "/metrics", { Authorization: `Bearer ${operator.key}` });
    assert.equal(scraped.status, 200);
  });
});
