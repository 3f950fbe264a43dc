import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { api, type ControlPlane, startControlPlane } from "@berth/test-support";
import { expectStatus, listRuns } from "./helpers/tracing.js";

/** A span of GET /api/v1/runs/{id}/spans (docs/tracing.md). */
interface Span {
  id: string;
  parent_run_id: string | null;
  dotted_order: string | null;
  depth: number;
  name: string | null;
  run_type: string | null;
  status: "pending" | "success" | "error";
  error: string | null;
  total_tokens: number | null;
  total_cost: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
}
interface SpanPage {
  resources: Span[];
  offset: number;
  total: number;
}

const T0 = Date.parse("2026-03-01T10:00:00.000Z");

/** A dotted-order segment as the langsmith client writes it: start time (µs) then the run id. */
const segment = (startMs: number, id: string) =>
  `${new Date(startMs).toISOString().replace(/[-:]/g, "").replace(".", "").replace("Z", "")}000Z${id}`;

interface RunSpec {
  id: string;
  trace_id: string;
  parent_run_id?: string;
  dotted_order: string;
  name: string;
  run_type: string;
  start_time: string;
  end_time?: string;
  error?: string;
  inputs: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  extra?: Record<string, unknown>;
  session_name: string;
}

/** A run of a trace being built: `child` adds one under it, starting `afterMs` after the root and lasting `ms`. */
function makeRun(
  project: string,
  name: string,
  startMs: number,
  ms: number | null,
  parent?: RunSpec,
  more: Partial<RunSpec> = {},
) {
  const id = randomUUID();
  const run: RunSpec = {
    id,
    trace_id: parent?.trace_id ?? id,
    ...(parent && { parent_run_id: parent.id }),
    dotted_order: parent ? `${parent.dotted_order}.${segment(startMs, id)}` : segment(startMs, id),
    name,
    run_type: "chain",
    start_time: new Date(startMs).toISOString(),
    ...(ms !== null && { end_time: new Date(startMs + ms).toISOString() }),
    inputs: { step: name },
    ...(ms !== null && { outputs: { done: name } }),
    session_name: project,
    ...more,
  };
  return run;
}

describe("tracing: trace filters and spans pages", () => {
  let cp: ControlPlane;
  const project = `reads-${randomUUID().slice(0, 8)}`;
  let fast: RunSpec;
  let slow: RunSpec;
  let open: RunSpec;
  let big: RunSpec;
  let bigChildren: RunSpec[];
  let middle: RunSpec;

  async function ingest(runs: RunSpec[]) {
    for (let index = 0; index < runs.length; index += 500) {
      const response = await cp.admin.call("POST", "/api/v1/runs/batch", { post: runs.slice(index, index + 500) });
      assert.equal(response.status, 202, JSON.stringify(response.body));
    }
  }

  before(async () => {
    cp = await startControlPlane();
    fast = makeRun(project, "agent", T0, 100, undefined, {
      extra: { metadata: { usage_metadata: { input_cost: 0.001, output_cost: 0.002, total_cost: 0.003 } } },
    });
    slow = makeRun(project, "agent", T0 + 1000, 2000, undefined, { error: `boom ${"x".repeat(2000)}` });
    open = makeRun(project, "other", T0 + 2000, null);
    // A trace of 1 + 1200 spans: 400 children, each with two grandchildren, to read page by page.
    big = makeRun(project, "big", T0 + 3000, 60_000);
    bigChildren = [];
    const grandchildren: RunSpec[] = [];
    for (let index = 0; index < 400; index++) {
      const child = makeRun(project, `child-${index}`, T0 + 3000 + index * 10, 5, big, { run_type: "llm" });
      bigChildren.push(child);
      grandchildren.push(
        makeRun(project, `leaf-${index}-a`, T0 + 3001 + index * 10, 1, child, { run_type: "tool" }),
        makeRun(project, `leaf-${index}-b`, T0 + 3002 + index * 10, 1, child, { run_type: "tool" }),
      );
    }
    middle = bigChildren[7]!;
    await ingest([fast, slow, open, big, ...bigChildren, ...grandchildren]);
  });
  after(() => cp.stop());

  const roots = async (query: string) => (await listRuns(cp.admin, project, `?root_only=true&${query}`)).map((run) => run.id);

  test("root runs filtered by status, error, name and latency", async () => {
    assert.deepEqual(await roots(""), [big.id, open.id, slow.id, fast.id], "newest first");
    assert.deepEqual(await roots("status=error"), [slow.id]);
    assert.deepEqual(await roots("error=true"), [slow.id]);
    assert.deepEqual(await roots("error=false"), [big.id, open.id, fast.id]);
    assert.deepEqual(await roots("status=success"), [big.id, fast.id]);
    assert.deepEqual(await roots("status=pending"), [open.id]);
    assert.deepEqual(await roots("status=success&error=true"), [], "contradicting filters: nothing");
    assert.deepEqual(await roots("name=agent"), [slow.id, fast.id]);
    assert.deepEqual(await roots("min_latency_ms=100"), [big.id, slow.id, fast.id], "bounds are inclusive");
    assert.deepEqual(await roots("min_latency_ms=101"), [big.id, slow.id], "a run not ended has no latency");
    assert.deepEqual(await roots("max_latency_ms=2000"), [slow.id, fast.id]);
    assert.deepEqual(await roots("min_latency_ms=150&max_latency_ms=2000&name=agent"), [slow.id]);
    assert.deepEqual(await roots("status=error&limit=1&offset=1"), []);
    // Without root_only, the filters apply to every run.
    assert.equal((await listRuns(cp.admin, project, "?name=child-3")).length, 1);
    assert.equal((await listRuns(cp.admin, project, "?max_latency_ms=1&limit=1000")).length, 800);
  });

  test("bad filter values are 422 in the validation shape", async () => {
    for (const query of ["status=broken", "min_latency_ms=-1", "max_latency_ms=abc", "error=maybe", "name=", "nope=1"]) {
      const response = await cp.admin.get<{ detail: { loc: unknown[]; msg: string }[] }>(
        `/api/v1/projects/${project}/runs?${query}`,
      );
      assert.equal(response.status, 422, query);
      assert.ok(Array.isArray(response.body.detail) && response.body.detail[0]?.loc, `${query}: {detail: [{loc, msg}]}`);
    }
    for (const query of ["limit=0", "limit=5001", "offset=-1", "other=1"]) {
      assert.equal((await cp.admin.get(`/api/v1/runs/${big.id}/spans?${query}`)).status, 422, query);
    }
  });

  test("a trace's spans page by page in dotted order, without inputs or outputs", async () => {
    const spans: Span[] = [];
    let total = -1;
    for (let offset = 0; ; ) {
      const page = expectStatus(await cp.admin.get<SpanPage>(`/api/v1/runs/${big.id}/spans?limit=500&offset=${offset}`), 200);
      total = page.total;
      spans.push(...page.resources);
      if (page.resources.length === 0) break;
      assert.equal(page.offset, offset + page.resources.length);
      offset = page.offset;
    }
    assert.equal(total, 1201);
    assert.equal(spans.length, 1201);
    assert.equal(spans[0]!.id, big.id);
    assert.equal(spans[0]!.depth, 0);
    assert.deepEqual(
      spans.slice(1, 4).map((span) => [span.name, span.depth, span.run_type]),
      [
        ["child-0", 1, "llm"],
        ["leaf-0-a", 2, "tool"],
        ["leaf-0-b", 2, "tool"],
      ],
    );
    assert.equal(spans.at(-1)!.name, "leaf-399-b");
    const sorted = [...spans].sort((a, b) => (a.dotted_order! < b.dotted_order! ? -1 : 1));
    assert.deepEqual(
      spans.map((span) => span.id),
      sorted.map((span) => span.id),
    );
    for (const span of spans) {
      assert.ok(!("inputs" in span) && !("outputs" in span) && !("events" in span) && !("extra" in span));
    }
    // A default page is 1000.
    assert.equal(expectStatus(await cp.admin.get<SpanPage>(`/api/v1/runs/${big.id}/spans`), 200).resources.length, 1000);
  });

  test("a run's spans are its subtree; errors are cut short, costs read from the usage metadata", async () => {
    const sub = expectStatus(await cp.admin.get<SpanPage>(`/api/v1/runs/${middle.id}/spans`), 200);
    assert.equal(sub.total, 3);
    assert.deepEqual(
      sub.resources.map((span) => [span.name, span.depth]),
      [
        ["child-7", 0],
        ["leaf-7-a", 1],
        ["leaf-7-b", 1],
      ],
    );
    const [failed] = expectStatus(await cp.admin.get<SpanPage>(`/api/v1/runs/${slow.id}/spans`), 200).resources;
    assert.equal(failed!.status, "error");
    assert.equal(failed!.error!.length, 500);
    assert.ok(failed!.error!.startsWith("boom x"));
    const [costly] = expectStatus(await cp.admin.get<SpanPage>(`/api/v1/runs/${fast.id}/spans`), 200).resources;
    assert.deepEqual([costly!.prompt_cost, costly!.completion_cost, costly!.total_cost], [0.001, 0.002, 0.003]);
    assert.equal(costly!.status, "success");
    const [pending] = expectStatus(await cp.admin.get<SpanPage>(`/api/v1/runs/${open.id}/spans`), 200).resources;
    assert.equal(pending!.status, "pending");
    assert.equal((await cp.admin.get(`/api/v1/runs/${randomUUID()}/spans`)).status, 404);
  });

  test("another workspace's trace: 404", async () => {
    const other = await cp.createTenant(`spans-${randomUUID().slice(0, 6)}`);
    const client = api(cp.url, (await cp.createKey({ tenants: [other.id] })).key);
    assert.equal((await client.get(`/api/v1/runs/${big.id}/spans`)).status, 404);
    assert.equal((await client.get(`/api/v1/projects/${project}/runs?status=error`)).status, 404);
  });
});
