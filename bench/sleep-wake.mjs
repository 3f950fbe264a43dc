#!/usr/bin/env node
// `node bench/sleep-wake.mjs`: the first response after a sleep, on the embedded listener (local compute).
// Deploys the example project (examples/echo-chat; BENCH_PROJECT=<dir> for another) with BERTH_IDLE_SECONDS=1, then
// BENCH_WAKES times (default 20): waits until the deployment sleeps (its Sleeping condition), sends one request through its
// stable URL (GET /threads/<id>, a thread made before the first sleep) and times its answer; a /runs/wait follows on the
// woken server. Prints the median and p99 of each and the server's start time from the Woke events; writes
// bench/results/sleep-wake-<time>.json; BENCH_STEPS=1 also prints the wakes' events and server log lines in time order.
// Not a test: figures depend on the machine.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import * as tar from "tar";
import { startBenchControlPlane } from "./control-plane.mjs";

const benchDir = dirname(fileURLToPath(import.meta.url));
const project = resolve(process.env.BENCH_PROJECT ?? join(benchDir, "..", "examples", "echo-chat"));
const WAKES = Number(process.env.BENCH_WAKES ?? 20);
const key = "berth_bench_admin_key";

const { call, untilDeployed, stop } = await startBenchControlPlane({ BERTH_IDLE_SECONDS: "1" });

async function packProject() {
  const file = join(mkdtempSync(join(tmpdir(), "berth-bench-tar-")), "src.tar.gz");
  await tar.c({ file, gzip: true, cwd: project, filter: (path) => !path.includes("node_modules") }, ["."]);
  return new Uint8Array(await readFile(file));
}

async function deploy() {
  const deployment = await call("POST", "/v2/deployments", {
    name: "sleep-wake",
    source: "internal_source",
    source_config: {},
    source_revision_config: { graph_config_path: "langgraph.json" },
    secrets: [],
  });
  const { upload_url, object_path } = await call("POST", `/v2/deployments/${deployment.id}/upload-url`);
  const put = await fetch(upload_url, {
    method: "PUT",
    body: await packProject(),
    headers: { "content-type": "application/gzip" },
  });
  if (!put.ok) throw new Error(`upload: ${put.status}`);
  const patched = await call("PATCH", `/v2/deployments/${deployment.id}`, {
    source_revision_config: { source_tarball_path: object_path },
  });
  await untilDeployed(deployment.id, patched.latest_revision_id);
  const current = await call("GET", `/v2/deployments/${deployment.id}`);
  return { id: deployment.id, revisionId: patched.latest_revision_id, url: current.source_config.custom_url };
}

async function untilAsleep(deploymentId) {
  for (;;) {
    const deployment = await call("GET", `/v2/deployments/${deploymentId}`);
    if (deployment.conditions.some((condition) => condition.type === "Sleeping" && condition.status === "True")) return;
    await delay(100);
  }
}

async function timed(url, init) {
  const started = performance.now();
  const response = await fetch(url, { ...init, headers: { "x-api-key": key, "content-type": "application/json" } });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${init?.method ?? "GET"} ${url}: ${response.status}`);
  return performance.now() - started;
}

/** BENCH_STEPS=1: the revision's events and its server's log lines in time order, to see where a wake's time goes. */
async function printSteps(deployment, events) {
  const { logs } = await call("POST", `/v1/projects/${deployment.id}/revisions/${deployment.revisionId}/deploy_logs`, {
    order: "asc",
    limit: 1000,
  });
  const lines = [
    ...events.map((event) => ({ at: Date.parse(event.at), text: `event ${event.reason}: ${event.message}` })),
    ...logs.map((line) => ({ at: Date.parse(line.timestamp), text: `log: ${line.message}` })),
  ].sort((a, b) => a.at - b.at);
  for (const line of lines) console.log(`${new Date(line.at).toISOString().slice(11, 23)}  ${line.text.slice(0, 160)}`);
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

const results = { project, wakes: WAKES, first_response_ms: [], run_after_wake_ms: [], server_start_ms: [] };
try {
  const deployment = await deploy();
  const thread = await (
    await fetch(`${deployment.url}/threads`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: "{}",
    })
  ).json();
  const run = {
    method: "POST",
    body: JSON.stringify({ assistant_id: "agent", input: { messages: [{ role: "user", content: "hi" }] } }),
  };
  await timed(`${deployment.url}/threads/${thread.thread_id}/runs/wait`, run);
  for (let wake = 0; wake < WAKES; wake++) {
    await untilAsleep(deployment.id);
    results.first_response_ms.push(await timed(`${deployment.url}/threads/${thread.thread_id}`));
    results.run_after_wake_ms.push(await timed(`${deployment.url}/threads/${thread.thread_id}/runs/wait`, run));
    process.stderr.write(`wake ${wake + 1}/${WAKES}: ${results.first_response_ms.at(-1).toFixed(0)} ms\n`);
  }
  const events = await call("GET", `/v2/deployments/${deployment.id}/revisions/${deployment.revisionId}/events`);
  if (process.env.BENCH_STEPS === "1") await printSteps(deployment, events.resources);
  for (const event of events.resources) {
    const started = /started in (\d+) ms/.exec(event.reason === "Woke" ? event.message : "");
    if (started) results.server_start_ms.push(Number(started[1]));
  }
} finally {
  stop();
}

const row = (label, values) =>
  `| ${label} | ${percentile(values, 50).toFixed(0)} | ${percentile(values, 99).toFixed(0)} | ${Math.max(...values).toFixed(0)} |`;
console.log(`\n| after a sleep (${WAKES} wakes, ${project.split("/").slice(-2).join("/")}) | p50 ms | p99 ms | max ms |`);
console.log("|---|---:|---:|---:|");
console.log(row("first response (GET /threads/{id}, held while the server starts)", results.first_response_ms));
console.log(row("the agent server's start, as the Woke event says", results.server_start_ms));
console.log(row("then /runs/wait on the woken server", results.run_after_wake_ms));
mkdirSync(join(benchDir, "results"), { recursive: true });
writeFileSync(
  join(benchDir, "results", `sleep-wake-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
  JSON.stringify(results, null, 2),
);
