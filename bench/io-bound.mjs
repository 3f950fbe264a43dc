#!/usr/bin/env node
// `node bench/io-bound.mjs`: many I/O-bound runs at once in one server process. The `model` graph of bench/graphs awaits a
// simulated model call (a timer: BENCH_MODEL_MS, default 1000), so a run costs little CPU: the server's run slots, or its
// CPU per run, limit the runs in flight. For each level of BENCH_LEVELS (default 100,200), that many clients of a load
// process of its own each stream one stateless `/runs/stream` run after another for BENCH_SECONDS (10), starting spread
// over the first model call, so runs arrive at the steady rate of that many in flight. Per run:
//   - pickup: from sending the request to the first SSE event (`metadata`, which both servers emit as the run starts);
//   - completion: from sending the request to the stream's end (the run's output in its last `values` event).
// p50 / p99 of each over the level's runs, runs/s, and the server's CPU ms per run (its process tree's, from /proc); each
// figure is the median of BENCH_REPEATS (3) load processes. Servers, each started fresh on a free loopback port with
// bench/graphs/langgraph.json: `berth dev` (SQLite, its defaults; BENCH_BERTH_WORKERS sets BERTH_WORKERS) and the
// reference (`langgraphjs dev` of @langchain/langgraph-api 1.5.1, `--n-jobs-per-worker BENCH_REFERENCE_JOBS`, default 200
// so its queue does not cap the levels either). BENCH_SERVERS=berth (or reference) runs one. Prints a markdown table, a JSON
// line, and writes bench/results/io-bound-<time>.json. Not a test: the figures depend on the machine.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  benchDir,
  berthDevArgs,
  ensureInstalled,
  median,
  root,
  sseEvents,
  treeCpuMs,
  withFreshServer,
  withoutBerthVariables,
} from "./common.mjs";

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const LEVELS = (process.env.BENCH_LEVELS ?? "100,200").split(",").map(Number);
const REFERENCE_JOBS = Number(process.env.BENCH_REFERENCE_JOBS ?? 200);
const BERTH_WORKERS = process.env.BENCH_BERTH_WORKERS;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 1000);

const log = (text) => process.stderr.write(`bench: ${text}\n`);

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : null;
}

/** Streams one run of the model graph; returns the times of its first event and of its end (ms after sending). */
async function timedRun(url) {
  const start = performance.now();
  const response = await fetch(`${url}/runs/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ assistant_id: "model", input: { text: "hi", ms: MODEL_MS }, stream_mode: ["values"] }),
  });
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  let pickup = null;
  let replied = false;
  for await (const { name, frame } of sseEvents(response.body)) {
    pickup ??= performance.now() - start;
    if (name === "error") throw new Error(frame);
    if (name === "values" && frame.includes('"reply"')) replied = true;
  }
  if (!replied) throw new Error("the stream ended without the model's reply");
  return { pickup, completion: performance.now() - start };
}

// Load mode: `node io-bound.mjs --load <url> <streams> <seconds>` keeps that many runs streaming for that long and prints
// one JSON line. A process of its own, so the load generator does not share an event loop with this script. Closed loop:
// each of the `streams` clients streams its next run as soon as the previous one ended, and the clients start spread over
// the first model call, so runs arrive at the steady rate of `streams` runs in flight (not all in the same millisecond).
if (process.argv[2] === "--load") {
  const [url, streams, seconds] = [process.argv[3], Number(process.argv[4]), Number(process.argv[5])];
  // The client's own first fetch (undici's setup, JIT) is not the server's pickup.
  for (let i = 0; i < 3; i++) await (await fetch(`${url}/ok`)).text();
  const ok = [];
  const failures = [];
  const begin = performance.now();
  const deadline = begin + seconds * 1000;
  await Promise.all(
    Array.from({ length: streams }, async (_, i) => {
      await new Promise((resolve) => setTimeout(resolve, (i * MODEL_MS) / streams));
      while (performance.now() < deadline) {
        try {
          ok.push(await timedRun(url));
        } catch (error) {
          failures.push(error);
        }
      }
    }),
  );
  const elapsed = (performance.now() - begin) / 1000;
  const pickups = ok.map((r) => r.pickup).sort((a, b) => a - b);
  const completions = ok.map((r) => r.completion).sort((a, b) => a - b);
  const out = {
    completed: ok.length,
    failures: failures.length,
    runs_per_second: ok.length / elapsed,
    completion_p50_ms: percentile(completions, 0.5),
    completion_p99_ms: percentile(completions, 0.99),
    pickup_p50_ms: percentile(pickups, 0.5),
    pickup_p99_ms: percentile(pickups, 0.99),
  };
  if (failures.length) process.stderr.write(`first failure: ${failures[0]?.message ?? failures[0]}\n`);
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(0);
}

const SERVERS = {
  berth: {
    label: `Berth embedded (SQLite, berth dev, ${BERTH_WORKERS ? `BERTH_WORKERS=${BERTH_WORKERS}` : "default BERTH_WORKERS"})`,
    command: (port, dataDir) => [
      process.execPath,
      berthDevArgs(port, dataDir),
      // Its defaults are what is measured (no BERTH_* from the caller's environment), unless BENCH_BERTH_WORKERS says.
      {
        cwd: root,
        env: {
          ...withoutBerthVariables(process.env),
          ...(BERTH_WORKERS ? { BERTH_WORKERS } : {}),
          DATABASE_URL: "",
          REDIS_URL: "",
          LOG_LEVEL: "warn",
        },
      },
    ],
  },
  reference: {
    label: `reference (@langchain/langgraph-api 1.5.1, langgraphjs dev -n ${REFERENCE_JOBS})`,
    command: (port) => [
      join(benchDir, "node_modules", ".bin", "langgraphjs"),
      [
        "dev",
        "--no-browser",
        "--no-reload",
        "-p",
        String(port),
        "-n",
        String(REFERENCE_JOBS),
        "-c",
        join(benchDir, "graphs", "langgraph.json"),
      ],
      { cwd: benchDir },
    ],
  },
};

function loadProcess(url, streams, seconds = SECONDS, serverPid = undefined) {
  const cpuBefore = serverPid && treeCpuMs(serverPid);
  const result = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--load", url, String(streams), String(seconds)], {
    cwd: benchDir,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`load of ${streams} streams failed: ${result.stderr}`);
  if (result.stderr.trim()) log(result.stderr.trim());
  const measured = JSON.parse(result.stdout.trim().split("\n").at(-1));
  // The server's CPU per run: whether the core or the slots limit the runs in flight, whatever else shares the machine.
  if (serverPid) measured.server_cpu_ms_per_run = (treeCpuMs(serverPid) - cpuBefore) / Math.max(1, measured.completed);
  return measured;
}

/** Repeats a level and keeps the median of each numeric field. */
function repeated(url, streams, serverPid) {
  const runs = Array.from({ length: REPEATS }, () => loadProcess(url, streams, SECONDS, serverPid));
  return Object.fromEntries(Object.keys(runs[0]).map((key) => [key, median(runs.map((r) => r[key]))]));
}

function measure(name) {
  return withFreshServer(name, SERVERS[name], async (url, pid) => {
    // Warm-up: the graph loaded and the paths JIT-compiled before measuring.
    loadProcess(url, 20, 3);
    const result = {};
    for (const level of LEVELS) {
      log(`${name}: ${level} concurrent streams`);
      result[level] = repeated(url, level, pid);
    }
    return result;
  });
}

ensureInstalled(root);
ensureInstalled(benchDir);
const only = process.env.BENCH_SERVERS?.split(",");
const results = {
  date: new Date().toISOString(),
  repeats: REPEATS,
  levels: LEVELS,
  seconds: SECONDS,
  model_ms: MODEL_MS,
  servers: {},
};
for (const name of Object.keys(SERVERS).filter((n) => !only || only.includes(n))) {
  log(`starting ${SERVERS[name].label}`);
  results.servers[name] = await measure(name);
}

const fmt = (value) => (typeof value === "number" ? String(Math.round(value)) : "n/a");
const lines = [
  `I/O-bound runs (a ${MODEL_MS} ms simulated model call each), ${SECONDS} s per level, medians of ${REPEATS}; times in ms from sending the request`,
  "",
  "| server | streams | runs/s | completion p50 | completion p99 | pickup p50 | pickup p99 | server CPU ms/run | failures |",
  "|---|---|---|---|---|---|---|---|---|",
];
for (const [name, server] of Object.entries(results.servers)) {
  if (server.error) {
    lines.push(`| ${name} | error: ${server.error.split("\n")[0]} | | | | | | | |`);
    continue;
  }
  for (const level of LEVELS) {
    const r = server[level];
    lines.push(
      `| ${name} | ${level} | ${fmt(r.runs_per_second)} | ${fmt(r.completion_p50_ms)} | ${fmt(r.completion_p99_ms)} | ${fmt(r.pickup_p50_ms)} | ${fmt(r.pickup_p99_ms)} | ${r.server_cpu_ms_per_run?.toFixed(1) ?? "n/a"} | ${fmt(r.failures)} |`,
    );
  }
}
mkdirSync(join(benchDir, "results"), { recursive: true });
const file = join(benchDir, "results", `io-bound-${results.date.replace(/[:.]/g, "-")}.json`);
writeFileSync(file, JSON.stringify(results, null, 2));
process.stdout.write(`${lines.join("\n")}\n\nJSON: ${JSON.stringify(results)}\n${file}\n`);
