#!/usr/bin/env node
// `node bench/fleet.mjs`: many deployments on one machine, most of them asleep (embedded listener, local compute).
// Packs one project (bench/projects/deploy-chat: a lockfile, so every build after the first reuses its install;
// BENCH_PROJECT=<dir> for another) once and creates BENCH_DEPLOYMENTS (default
// 1000) deployments of it, BENCH_CONCURRENCY (default 4) at a time, each uploading the same tarball under its own name;
// BERTH_IDLE_SECONDS (default 10 here) puts each to sleep soon after its build. Then, with all of them registered and
// BENCH_AWAKE (default 20) awake (requests through their stable URLs keep them so), BENCH_ROUNDS (default 3) rounds of:
//   - API latency: BENCH_API_REQUESTS (default 200) sequential calls each of GET /v2/deployments (default page),
//     GET /v2/deployments?name_contains=…&limit=10 and GET /v2/deployments/{id}: p50 and p99;
//   - the control plane's CPU while nothing is asked of it (its listener's reconcile passes, the sleeper's looks);
//   - RSS: VmRSS summed over the control plane (with its listener) and every process under it (the agent servers);
//   - throughput of one deployment (thread create + runs/wait, one client, BENCH_SECONDS, default 5) alone awake
//     ("solo": the other awake ones asleep first) and with the other BENCH_AWAKE-1 awake but idle ("fleet"), measured
//     right after waking them and again once their processes have settled (their CPU has stopped falling).
// The throughput ratio is fleet/solo for the same light per-deployment load: what sleeping and idle neighbours cost a
// deployment, not a share of the CPU under 20 concurrent loads. Prints medians of the rounds as a markdown table, with
// the load average; writes bench/results/fleet-<time>.json. Not a test: figures depend on the machine.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import * as tar from "tar";
import { median, processTree, treeCpuMs, treeRss } from "./common.mjs";
import { startBenchControlPlane } from "./control-plane.mjs";

const benchDir = dirname(fileURLToPath(import.meta.url));
const project = resolve(process.env.BENCH_PROJECT ?? join(benchDir, "projects", "deploy-chat"));
const COUNT = Number(process.env.BENCH_DEPLOYMENTS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const AWAKE = Math.min(Number(process.env.BENCH_AWAKE ?? 20), COUNT);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const API_REQUESTS = Number(process.env.BENCH_API_REQUESTS ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const IDLE_SECONDS = process.env.BERTH_IDLE_SECONDS ?? "10";
/** Creation stops after this long (0: never), and the rounds measure the deployments made by then (results say how many). */
const CREATE_SECONDS = Number(process.env.BENCH_CREATE_SECONDS ?? 0);
/** How often keepAwake sends its requests: a third of the idle time. */
const KEEP_AWAKE_MS = Math.max(1000, (Number(IDLE_SECONDS) * 1000) / 3);
const key = "berth_bench_admin_key";
const headers = { "x-api-key": key, "content-type": "application/json" };

const started = Date.now();
/** BENCH_ATTACH=<url> BENCH_ATTACH_PID=<pid>: measure a control plane a previous run left with its deployments (no creation). */
const ATTACH = process.env.BENCH_ATTACH;
const plane = ATTACH
  ? attach(ATTACH, Number(process.env.BENCH_ATTACH_PID))
  : await startBenchControlPlane({ BERTH_IDLE_SECONDS: IDLE_SECONDS });
const { call, untilDeployed, stop } = plane;

function attach(url, pid) {
  async function call(method, path, body) {
    const response = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }
  return { url, pid, call, untilDeployed: () => Promise.reject(new Error("attached: no creation")), stop: () => {} };
}

async function packProject() {
  const file = join(mkdtempSync(join(tmpdir(), "berth-bench-tar-")), "src.tar.gz");
  await tar.c({ file, gzip: true, cwd: project, filter: (path) => !path.includes("node_modules") }, ["."]);
  return new Uint8Array(await readFile(file));
}

async function create(name, tarball) {
  const deployment = await call("POST", "/v2/deployments", {
    name,
    source: "internal_source",
    source_config: {},
    source_revision_config: { graph_config_path: "langgraph.json" },
    secrets: [],
  });
  const { upload_url, object_path } = await call("POST", `/v2/deployments/${deployment.id}/upload-url`);
  const put = await fetch(upload_url, { method: "PUT", body: tarball, headers: { "content-type": "application/gzip" } });
  if (!put.ok) throw new Error(`upload: ${put.status}`);
  const patched = await call("PATCH", `/v2/deployments/${deployment.id}`, {
    source_revision_config: { source_tarball_path: object_path },
  });
  await untilDeployed(deployment.id, patched.latest_revision_id);
  const current = await call("GET", `/v2/deployments/${deployment.id}`);
  return { id: deployment.id, name, url: current.source_config.custom_url };
}

const sleeping = (deployment) => deployment.conditions.some((c) => c.type === "Sleeping" && c.status === "True");

async function untilAsleep(ids) {
  for (const id of ids) while (!sleeping(await call("GET", `/v2/deployments/${id}`))) await delay(250);
}

/** How many of the deployments are awake (READY without Sleeping=True), read page by page. */
async function awakeCount() {
  let awake = 0;
  for (let offset = 0; ; offset += 100) {
    const page = await call("GET", `/v2/deployments?limit=100&offset=${offset}`);
    awake += page.resources.filter((d) => d.status === "READY" && !sleeping(d)).length;
    if (page.resources.length < 100) return awake;
  }
}

async function untilAllAsleep() {
  for (let awake = await awakeCount(); awake > 0; awake = await awakeCount()) {
    process.stderr.write(`${awake} awake\n`);
    await delay(1000);
  }
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function apiLatency(path) {
  const times = [];
  for (let i = 0; i < API_REQUESTS; i++) {
    const t = performance.now();
    const response = await fetch(plane.url + path, { headers });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`GET ${path}: ${response.status}`);
    times.push(performance.now() - t);
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** CPU seconds (user + system) the process used so far. */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function idleCpuPercent(seconds) {
  const before = cpuSeconds(plane.pid);
  await delay(seconds * 1000);
  return ((cpuSeconds(plane.pid) - before) / seconds) * 100;
}

/**
 * Waits until the processes under the control plane have settled after a wake: woken servers finish starting, compiling
 * and collecting. Settled: their CPU over one keep-awake period no longer falls by a fifth from the period before, and
 * leaves a tenth of the machine's cores idle (a saturated machine's CPU does not fall either); at most 60 s. Resolves
 * with the seconds waited and the last period's CPU, in % of one core.
 */
async function settled() {
  const t = performance.now();
  const saturated = availableParallelism() * 90;
  let previous = Number.POSITIVE_INFINITY;
  for (;;) {
    const before = treeCpuMs(plane.pid);
    await delay(KEEP_AWAKE_MS);
    const percent = (Math.max(0, treeCpuMs(plane.pid) - before) / KEEP_AWAKE_MS) * 100;
    if ((percent >= previous * 0.8 && percent < saturated) || performance.now() - t > 60_000)
      return { seconds: (performance.now() - t) / 1000, cpu_percent: percent };
    previous = percent;
  }
}

async function post(url, body) {
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/** Thread create + runs/wait, one at a time, for SECONDS: operations per second. */
async function throughput(deployment) {
  const input = { assistant_id: "agent", input: { messages: [{ role: "user", content: "hi" }] } };
  // One first: a sleeping deployment wakes, outside the timed part.
  await post(`${deployment.url}/threads/${(await post(`${deployment.url}/threads`, {})).thread_id}/runs/wait`, input);
  let done = 0;
  const until = performance.now() + SECONDS * 1000;
  const t = performance.now();
  while (performance.now() < until) {
    const thread = await post(`${deployment.url}/threads`, {});
    await post(`${deployment.url}/threads/${thread.thread_id}/runs/wait`, input);
    done++;
  }
  return done / ((performance.now() - t) / 1000);
}

/** Keeps the deployments awake: a request through each one's stable URL more often than the idle time. */
function keepAwake(deployments) {
  const timer = setInterval(() => {
    for (const d of deployments)
      fetch(`${d.url}/ok`).then(
        (r) => r.arrayBuffer(),
        () => {},
      );
  }, KEEP_AWAKE_MS);
  return () => clearInterval(timer);
}

const results = {
  project,
  deployments: COUNT,
  awake: AWAKE,
  idle_seconds: Number(IDLE_SECONDS),
  concurrency: CONCURRENCY,
  rounds: [],
  creation: {},
  cpus: (await import("node:os")).cpus().length,
};
try {
  const tarball = ATTACH ? undefined : await packProject();
  const deployments = [];
  let attachedOthers = 0;
  if (ATTACH) {
    for (let offset = 0; ; offset += 100) {
      const page = await call("GET", `/v2/deployments?limit=100&offset=${offset}`);
      attachedOthers += page.resources.filter((d) => d.status !== "READY").length;
      for (const d of page.resources)
        if (d.status === "READY") deployments.push({ id: d.id, name: d.name, url: d.source_config.custom_url });
      if (page.resources.length < 100) break;
    }
    deployments.sort((a, b) => a.name.localeCompare(b.name));
  }
  const createStarted = Date.now();
  let next = 0;
  const rssDuring = [];
  const rssTimer = setInterval(() => rssDuring.push(treeRss(plane.pid)), 5000);
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (!ATTACH && next < COUNT && !(CREATE_SECONDS > 0 && Date.now() - createStarted > CREATE_SECONDS * 1000)) {
        const index = next++;
        try {
          deployments[index] = await create(`fleet-${String(index).padStart(4, "0")}`, tarball);
        } catch (error) {
          // A deploy that fails on a loaded machine (its server's start timed out) is counted, not fatal.
          results.failed_deploys = (results.failed_deploys ?? 0) + 1;
          process.stderr.write(`deployment ${index}: ${error.message}\n`);
          continue;
        }
        const made = deployments.filter(Boolean).length;
        if (made % 25 === 0 || made === COUNT) {
          const rate = made / ((Date.now() - createStarted) / 1000);
          process.stderr.write(`${made}/${COUNT} deployed (${rate.toFixed(2)}/s, load ${loadavg()[0].toFixed(2)})\n`);
        }
      }
    }),
  );
  clearInterval(rssTimer);
  const made = deployments.filter(Boolean);
  deployments.length = 0;
  deployments.push(...made);
  results.created = deployments.length;
  // Out of time: the rest are registered without their upload (a revision awaiting its source, nothing to build or run),
  // so the API and the listener's reconcile still see BENCH_DEPLOYMENTS deployments. The results say how many are which.
  const registered = [];
  if (!ATTACH && process.env.BENCH_FILL !== "0") {
    // Named after the last one tried: a failed deploy keeps its name.
    for (let index = next; results.created + registered.length < COUNT; index++) {
      const name = `fleet-${String(index).padStart(4, "0")}`;
      registered.push(
        await call("POST", "/v2/deployments", {
          name,
          source: "internal_source",
          source_config: {},
          source_revision_config: { graph_config_path: "langgraph.json" },
          secrets: [],
        }),
      );
    }
  }
  results.registered_without_source = ATTACH ? attachedOthers : registered.length;
  results.creation = {
    seconds: (Date.now() - createStarted) / 1000,
    per_second: results.created / ((Date.now() - createStarted) / 1000),
    max_rss_mib_during: Math.max(0, ...rssDuring),
  };
  process.stderr.write("waiting for every deployment to sleep ...\n");
  await untilAllAsleep();
  results.creation.all_asleep_after_seconds = (Date.now() - createStarted) / 1000;
  results.rss_all_asleep_mib = treeRss(plane.pid);

  const subject = deployments[0];
  const others = deployments.slice(1, AWAKE);
  const namePart = deployments[Math.floor(deployments.length / 2)].name.slice(0, -1);
  for (let round = 0; round < ROUNDS; round++) {
    process.stderr.write(`round ${round + 1}/${ROUNDS}: solo ...\n`);
    await untilAsleep(others.map((d) => d.id));
    const soloKeep = keepAwake([subject]);
    const solo = await throughput(subject);
    soloKeep();
    process.stderr.write(`round ${round + 1}/${ROUNDS}: waking ${others.length} more ...\n`);
    await Promise.all(others.map((d) => fetch(`${d.url}/info`, { headers }).then((r) => r.arrayBuffer())));
    const keep = keepAwake([subject, ...others]);
    const awakeNow = await awakeCount();
    // Right after the wake, while the woken servers still start, and once they have settled.
    const woken = await throughput(subject);
    const settle = await settled();
    const fleet = await throughput(subject);
    const rss = treeRss(plane.pid);
    const processes = processTree(plane.pid).length;
    const idleCpu = await idleCpuPercent(10);
    const list = await apiLatency("/v2/deployments");
    const filtered = await apiLatency(`/v2/deployments?name_contains=${namePart}&limit=10`);
    const get = await apiLatency(`/v2/deployments/${deployments.at(-1).id}`);
    keep();
    const round_ = {
      solo,
      fleet,
      ratio: fleet / solo,
      just_woken: woken,
      ratio_just_woken: woken / solo,
      settle_seconds: settle.seconds,
      awake_cpu_percent: settle.cpu_percent,
      rss_mib: rss,
      processes,
      awake: awakeNow,
      idle_cpu_percent: idleCpu,
      list,
      filtered,
      get,
      load: loadavg(),
    };
    results.rounds.push(round_);
    process.stderr.write(`${JSON.stringify(round_)}\n`);
  }
} finally {
  stop();
}

const m = (pick) => median(results.rounds.map(pick));
results.medians = {
  list_p50_ms: m((r) => r.list.p50),
  list_p99_ms: m((r) => r.list.p99),
  filtered_p50_ms: m((r) => r.filtered.p50),
  filtered_p99_ms: m((r) => r.filtered.p99),
  get_p50_ms: m((r) => r.get.p50),
  get_p99_ms: m((r) => r.get.p99),
  rss_mib: m((r) => r.rss_mib),
  idle_cpu_percent: m((r) => r.idle_cpu_percent),
  solo_ops_per_second: m((r) => r.solo),
  fleet_ops_per_second: m((r) => r.fleet),
  ratio: m((r) => r.ratio),
  just_woken_ops_per_second: m((r) => r.just_woken),
  ratio_just_woken: m((r) => r.ratio_just_woken),
  settle_seconds: m((r) => r.settle_seconds),
  awake_cpu_percent: m((r) => r.awake_cpu_percent),
};
results.seconds = (Date.now() - started) / 1000;
const md = results.medians;
const COUNTED =
  results.registered_without_source > 0
    ? `${results.created + results.registered_without_source} (${results.created} built and sleeping, ${results.registered_without_source} registered without an upload)`
    : String(results.created ?? COUNT);
const f = (value, digits = 1) => (value === null ? "n/a" : value.toFixed(digits));
console.log(
  `\n| ${COUNTED} deployments, ${AWAKE} awake (${results.cpus} CPUs, medians of ${ROUNDS}, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}) | figure | target |`,
);
console.log("|---|---:|---|");
console.log(`| GET /v2/deployments (default page) p50 / p99 ms | ${f(md.list_p50_ms)} / ${f(md.list_p99_ms)} | p99 ≤ 50 |`);
console.log(
  `| GET /v2/deployments?name_contains=…&limit=10 p50 / p99 ms | ${f(md.filtered_p50_ms)} / ${f(md.filtered_p99_ms)} | p99 ≤ 50 |`,
);
console.log(`| GET /v2/deployments/{id} p50 / p99 ms | ${f(md.get_p50_ms)} / ${f(md.get_p99_ms)} | p99 ≤ 50 |`);
console.log(`| RSS, control plane + listener + agent servers, MiB | ${f(md.rss_mib, 0)} | ≤ 4096 |`);
console.log(`| RSS with every deployment asleep, MiB | ${f(results.rss_all_asleep_mib, 0)} | |`);
console.log(`| control plane CPU while idle (reconcile, sleeper), % of one core | ${f(md.idle_cpu_percent)} | |`);
console.log(
  `| one deployment, thread + runs/wait per s: solo / with ${AWAKE - 1} awake | ${f(md.solo_ops_per_second)} / ${f(md.fleet_ops_per_second)} | |`,
);
console.log(`| ratio fleet / solo, once the woken servers settled | ${f(md.ratio, 2)} | ≥ 0.90 |`);
console.log(
  `| the same right after the wake, while they start: per s, ratio | ${f(md.just_woken_ops_per_second)}, ${f(md.ratio_just_woken, 2)} | |`,
);
console.log(
  `| settling after the wake: seconds; then CPU of all processes, % of one core | ${f(md.settle_seconds)}; ${f(md.awake_cpu_percent)} | |`,
);
if (!ATTACH)
  console.log(
    `| creating the ${results.created} built ones: seconds, per second | ${f(results.creation.seconds, 0)}, ${f(results.creation.per_second, 2)} | |`,
  );
mkdirSync(join(benchDir, "results"), { recursive: true });
writeFileSync(
  join(benchDir, "results", `fleet-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
  JSON.stringify(results, null, 2),
);
