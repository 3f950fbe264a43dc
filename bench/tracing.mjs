#!/usr/bin/env node
// `node bench/tracing.mjs`: what tracing costs a run. For each graph of bench/graphs (`trivial`: one node, 3 traced
// runs; `messages`: one node appending an AIMessage; `tools`: a tool-calling loop over a fake model; `tokens`: a fake
// model streaming 40 tokens, 4 traced runs with 40 token events) and each setting
//   - off:  no tracing,
//   - on:   traced into a control plane's tracing service on this machine (berth control-plane, SQLite),
//   - down: LANGSMITH_ENDPOINT at a closed port (traces lost),
// it times BENCH_RUNS (default 200) sequential stateless /runs/wait per setting, against one `berth dev` per setting,
// all up at once: after BENCH_WARMUP_RUNS (default 300; V8 compiles a graph's hot code on threads of the server's
// process, which the CPU figure would count) on each, the runs alternate between the servers one by one, so a busy
// spell of the shared machine falls on every setting alike. Prints p50/p90 per run and the agent server's CPU per run
// (its process tree's user + system time from /proc over the runs and the second after them, when the last traces are
// sent; the tracing service's own CPU apart). Writes bench/results/tracing-<time>.json. Not a test: the figures depend
// on the machine (and, for `on`, the tracing service shares its CPUs). BENCH_GRAPHS (comma-separated) and
// BENCH_SETTINGS select; BENCH_REPEATS (default 1) rounds, fresh servers each, medians. BENCH_CPU_PROF=<dir> starts
// the agent servers with --cpu-prof (one profile per setting and round, written when each stops; profile-summary.mjs
// reads them). The load average before and after is printed and kept.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { treeCpuMs } from "./common.mjs";
import { INPUTS } from "./graphs/inputs.mjs";

const benchDir = dirname(fileURLToPath(import.meta.url));
const berthBin = join(benchDir, "..", "packages", "cli", "bin", "berth.mjs");
const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const ALL_GRAPHS = { ...INPUTS, tokens: { messages: [{ type: "human", content: "hi" }] } };
const GRAPHS = process.env.BENCH_GRAPHS
  ? Object.fromEntries(process.env.BENCH_GRAPHS.split(",").map((name) => [name, ALL_GRAPHS[name]]))
  : ALL_GRAPHS;
const REPEATS = Number(process.env.BENCH_REPEATS ?? 1);
const WARMUP_RUNS = Number(process.env.BENCH_WARMUP_RUNS ?? 300);
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
// Node flags, not NODE_OPTIONS: Node 20 refuses --cpu-prof there.
const profileFlags = PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [];
const KEY = "berth_bench_tracing_key";

/** Spawns a berth command and resolves with its URL once the line `msg` carries it. */
function start(args, env, msg, nodeFlags = []) {
  const child = spawn(process.execPath, [...nodeFlags, berthBin, ...args], {
    // Info level: the listening lines carry the URLs.
    env: { ...process.env, DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = new Promise((resolve, reject) => {
    let text = "";
    child.stdout.on("data", (chunk) => {
      text += chunk;
      const match = new RegExp(`"url":"([^"]+)"[^\\n]*"msg":"${msg}"`).exec(text);
      if (match) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`${args[0]} exited ${code}`)));
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", resolve);
      child.kill("SIGTERM");
    });
  return { url, stop, pid: child.pid };
}

function closedPort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Measures `graph` on every server at once: after WARMUP_RUNS runs on each, the runs alternate between the servers one
 * by one, so a busy spell of the shared machine falls on every setting alike; each server's CPU counts over the same
 * window (the runs and the second after them, when the last traces are sent).
 */
async function measureTogether(servers, graph, cpPid) {
  const body = JSON.stringify({ assistant_id: graph, input: GRAPHS[graph] });
  const once = async (url) => {
    const response = await fetch(`${url}/runs/wait`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const text = await response.text();
    if (response.status !== 200 || text.includes("__error__")) throw new Error(`run failed: ${response.status} ${text}`);
  };
  for (const { url } of servers) for (let i = 0; i < WARMUP_RUNS; i++) await once(url);
  const times = servers.map(() => []);
  const cpu = servers.map(({ pid }) => treeCpuMs(pid));
  const cpCpu = treeCpuMs(cpPid);
  for (let i = 0; i < RUNS; i++) {
    for (const [s, { url }] of servers.entries()) {
      const started = performance.now();
      await once(url);
      times[s].push(performance.now() - started);
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const tracingServiceCpu = Number(((treeCpuMs(cpPid) - cpCpu) / RUNS).toFixed(2));
  return servers.map(({ name, pid }, s) => {
    const sorted = times[s].sort((a, b) => a - b);
    const at = (q) => Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))].toFixed(2));
    return {
      name,
      p50_ms: at(0.5),
      p90_ms: at(0.9),
      cpu_ms_per_run: Number(((treeCpuMs(pid) - cpu[s]) / RUNS).toFixed(2)),
      // Only `on` sends to the tracing service.
      tracing_service_cpu_ms_per_run: name === "on" ? tracingServiceCpu : 0,
    };
  });
}

const cp = start(
  ["control-plane", "--port", "0", "--data-dir", mkdtempSync(join(tmpdir(), "berth-bench-tracing-cp-"))],
  {
    BERTH_ADMIN_API_KEY: KEY,
    BERTH_EMBEDDED_LISTENER: "0",
    BERTH_ROUTER_PORT: "0",
  },
  "control plane listening",
);
const cpUrl = await cp.url;
const tracing = (endpoint) => ({
  LANGSMITH_TRACING: "true",
  LANGSMITH_ENDPOINT: endpoint,
  LANGSMITH_API_KEY: KEY,
  LANGSMITH_PROJECT: "bench",
});
const settings = { off: {}, on: tracing(`${cpUrl}/api/v1`), down: tracing(`http://127.0.0.1:${await closedPort()}/api/v1`) };

const wanted = process.env.BENCH_SETTINGS?.split(",");
const chosen = Object.entries(settings).filter(([name]) => name === "off" || !wanted || wanted.includes(name));
const loadBefore = loadavg().map((n) => Number(n.toFixed(2)));
const rounds = {};
for (let round = 0; round < REPEATS; round++) {
  const servers = [];
  for (const [name, env] of chosen) {
    const server = start(
      [
        "dev",
        "--no-reload",
        join(benchDir, "graphs"),
        "--port",
        "0",
        "--data-dir",
        mkdtempSync(join(tmpdir(), "berth-bench-tracing-")),
      ],
      env,
      "agent server listening",
      profileFlags,
    );
    servers.push({ name, ...server, url: await server.url });
  }
  for (const graph of Object.keys(GRAPHS)) {
    for (const { name, ...measured } of await measureTogether(servers, graph, cp.pid)) {
      ((rounds[graph] ??= {})[name] ??= []).push(measured);
    }
  }
  await Promise.all(servers.map((server) => server.stop()));
}
await cp.stop();
const loadAfter = loadavg().map((n) => Number(n.toFixed(2)));

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const results = {};
for (const [graph, bySetting] of Object.entries(rounds)) {
  for (const [name, measured] of Object.entries(bySetting)) {
    (results[graph] ??= {})[name] = Object.fromEntries(
      Object.keys(measured[0]).map((key) => [key, median(measured.map((m) => m[key]))]),
    );
  }
}
const none = { p50_ms: NaN, p90_ms: NaN, cpu_ms_per_run: NaN, tracing_service_cpu_ms_per_run: NaN };

console.log(
  "| graph | off p50 / p90 | on p50 / p90 | down p50 / p90 | on − off (p50) | server CPU ms/run off / on / down | on ÷ off CPU | down ÷ off CPU | tracing service CPU ms/run |",
);
console.log(`|---|---|---|---|---|---|---:|---:|---:|`);
for (const [graph, measured] of Object.entries(results)) {
  const r = { off: none, on: none, down: none, ...measured };
  const cell = (m) => `${m.p50_ms} / ${m.p90_ms} ms`;
  const cpu = `${r.off.cpu_ms_per_run} / ${r.on.cpu_ms_per_run} / ${r.down.cpu_ms_per_run}`;
  console.log(
    `| ${graph} | ${cell(r.off)} | ${cell(r.on)} | ${cell(r.down)} | ${(r.on.p50_ms - r.off.p50_ms).toFixed(2)} ms | ${cpu} | ` +
      `${(r.on.cpu_ms_per_run / r.off.cpu_ms_per_run).toFixed(2)}× | ${(r.down.cpu_ms_per_run / r.off.cpu_ms_per_run).toFixed(2)}× | ${r.on.tracing_service_cpu_ms_per_run} |`,
  );
}
mkdirSync(join(benchDir, "results"), { recursive: true });
const file = join(benchDir, "results", `tracing-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
writeFileSync(
  file,
  `${JSON.stringify({ runs: RUNS, repeats: REPEATS, load_before: loadBefore, load_after: loadAfter, results, rounds }, null, 2)}\n`,
);
console.log(`\nload average before ${loadBefore.join(" ")}, after ${loadAfter.join(" ")}; ${REPEATS} round(s), medians`);
console.log(`\n${file}`);
