#!/usr/bin/env node
// `node bench/graphs-vs-floor.mjs`: Berth against the floor on real graphs. For each graph of BENCH_GRAPHS (default
// `trivial,messages,tools`: one node; `MessagesAnnotation` with one node appending an `AIMessage`; a tool-calling loop
// over a fake model) and each server (BENCH_SERVERS; Berth on SQLite with BERTH_EXECUTION_THREAD off (the default, `berth`), auto and on;
// Berth on PostgreSQL + Redis when DATABASE_URL and REDIS_URL are set; the reference when bench/ is installed), it warms
// the server up (BENCH_WARMUP_REQUESTS thread runs per graph, 1,000), then measures thread create +
// `/threads/{id}/runs/wait` at concurrency 32 and stateless `/runs/wait` at concurrency 1, and the floor (floor.mjs: the same graph invoked in-process, one at a time,
// with a MemorySaver for the thread case) in the same round, right before. BENCH_REPEATS (3) rounds, medians; the
// Berth ÷ floor ratio of each server uses the floors of its own rounds. Server CPU per thread run comes from /proc.
// BENCH_CPU_PROF=<dir> starts Berth with --cpu-prof (profiles written to <dir> when it stops; profile-summary.mjs reads them).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { INPUTS } from "./graphs/inputs.mjs";
import { readdirSync, readFileSync } from "node:fs";
import { benchDir, berthDevArgs, median, processTree, root, treeCpuMs, withFreshServer } from "./common.mjs";

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const GRAPHS = (process.env.BENCH_GRAPHS ?? "trivial,messages,tools").split(",");
const THREAD_REQUESTS = Number(process.env.BENCH_REQUESTS ?? 600);
const WAIT1_REQUESTS = Number(process.env.BENCH_WAIT1_REQUESTS ?? 400);
const FLOOR_COUNT = Number(process.env.BENCH_FLOOR_COUNT ?? 1000);
const WARMUP_REQUESTS = Number(process.env.BENCH_WARMUP_REQUESTS ?? 1000);
const PROFILE_DIR = process.env.BENCH_CPU_PROF;

// Node flags, not NODE_OPTIONS: Node 20 refuses --cpu-prof there.
const profileFlags = PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [];
/** `berth dev` on SQLite with BERTH_EXECUTION_THREAD=`executionThread`. */
const embedded = (label, executionThread) => ({
  label,
  command: (port, dataDir) => [
    process.execPath,
    [...profileFlags, ...berthDevArgs(port, dataDir)],
    {
      cwd: root,
      env: { ...process.env, DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "warn", BERTH_EXECUTION_THREAD: executionThread },
    },
  ],
});
const SERVERS = {
  berth: embedded("Berth embedded (SQLite), the default: one thread", "off"),
  berth_auto: embedded("Berth embedded (SQLite), runs on the main thread and, under load, an execution thread beside it", "auto"),
  berth_thread: embedded("Berth embedded (SQLite), runs in the execution thread only", "on"),
};
if (process.env.DATABASE_URL && process.env.REDIS_URL) {
  const { freshDatabase } = await import("./scale-out.mjs");
  const databaseUrl = await freshDatabase(process.env.DATABASE_URL);
  SERVERS.berth_pg = {
    label: "Berth PostgreSQL + Redis (one process)",
    command: (port) => [
      process.execPath,
      [
        ...profileFlags,
        join(root, "packages", "cli", "bin", "berth.mjs"),
        "serve",
        join(benchDir, "graphs"),
        "--port",
        String(port),
      ],
      { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl, BERTH_REDIS_PREFIX: "berth_bench", LOG_LEVEL: "warn" } },
    ],
  };
}
const referenceBin = join(benchDir, "node_modules", ".bin", "langgraphjs");
if (existsSync(referenceBin)) {
  SERVERS.reference = {
    label: "reference (@langchain/langgraph-api 1.5.1, langgraphjs dev)",
    command: (port) => [
      referenceBin,
      ["dev", "--no-browser", "--no-reload", "-p", String(port), "-c", join(benchDir, "graphs", "langgraph.json")],
      { cwd: benchDir },
    ],
  };
}
const only = process.env.BENCH_SERVERS?.split(",");

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: benchDir, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`${args.join(" ")} failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split("\n").at(-1));
}

const load = (url, scenario, options) => run([join(benchDir, "load.mjs"), url, scenario, JSON.stringify(options)]);
const body = (graph) => ({ assistant_id: graph, input: INPUTS[graph] });

/** Medians of each numeric field of a list of results (nested one level). */
function medians(list) {
  const out = {};
  for (const key of Object.keys(list[0]))
    out[key] =
      typeof list[0][key] === "object" && list[0][key] !== null
        ? medians(list.map((item) => item[key]))
        : median(list.map((item) => item[key]));
  return out;
}

/** CPU ms of each thread of the server's processes, keyed `pid/tid` (a process's main thread has tid = pid). */
function threadCpuMs(pid) {
  const out = new Map();
  for (const proc of processTree(pid)) {
    let tasks = [];
    try {
      tasks = readdirSync(`/proc/${proc}/task`);
    } catch {}
    for (const tid of tasks) {
      try {
        const stat = readFileSync(`/proc/${proc}/task/${tid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        out.set(`${proc}/${tid}`, (Number(fields[11]) + Number(fields[12])) * 10);
      } catch {}
    }
  }
  return out;
}

/**
 * Per run: the CPU of the main threads (HTTP, and the runs without the execution thread) and of the busiest other
 * thread (the execution thread when there is one; else a GC or checkpoint helper). With two idle cores, the larger
 * of the two bounds the runs per second.
 */
function threadSplit(before, after, runs) {
  let main = 0;
  let other = 0;
  for (const [key, ms] of after) {
    const delta = ms - (before.get(key) ?? 0);
    const [proc, tid] = key.split("/");
    if (proc === tid) main += delta;
    else other = Math.max(other, delta);
  }
  return { main_thread_cpu_ms_per_run: main / runs, busiest_other_thread_cpu_ms_per_run: other / runs };
}

async function measure(url, pid) {
  // Warm-up: each graph's code paths compiled by the JIT, in every thread that executes runs.
  for (const graph of GRAPHS) {
    load(url, "statelessWait", { concurrency: 4, requests: 100, seconds: 30, graph: body(graph) });
    load(url, "threadWait", { concurrency: 32, requests: WARMUP_REQUESTS, seconds: 30, graph: body(graph) });
  }
  const rounds = Object.fromEntries(GRAPHS.map((graph) => [graph, []]));
  for (let round = 0; round < REPEATS; round++) {
    for (const graph of GRAPHS) {
      process.stderr.write(`bench: round ${round + 1}/${REPEATS} ${graph}\n`);
      const floor = run([join(benchDir, "floor.mjs"), String(FLOOR_COUNT), graph]).graphs[graph];
      const cpuBefore = treeCpuMs(pid);
      const threadsBefore = threadCpuMs(pid);
      const thread = load(url, "threadWait", { concurrency: 32, requests: THREAD_REQUESTS, seconds: 60, graph: body(graph) });
      thread.server_cpu_ms_per_run = (treeCpuMs(pid) - cpuBefore) / thread.completed;
      Object.assign(thread, threadSplit(threadsBefore, threadCpuMs(pid), thread.completed));
      const wait1 = load(url, "statelessWait", { concurrency: 1, requests: WAIT1_REQUESTS, seconds: 10, graph: body(graph) });
      rounds[graph].push({ floor, thread, wait1 });
    }
  }
  return { graphs: Object.fromEntries(GRAPHS.map((graph) => [graph, medians(rounds[graph])])) };
}

if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
const results = {
  date: new Date().toISOString(),
  cores: cpus().length,
  loadavg_before: loadavg(),
  repeats: REPEATS,
  plan: { thread_requests: THREAD_REQUESTS, wait1_requests: WAIT1_REQUESTS, floor_count: FLOOR_COUNT },
  servers: {},
};
for (const [name, server] of Object.entries(SERVERS)) {
  if (only && !only.includes(name)) continue;
  process.stderr.write(`bench: ${server.label}\n`);
  results.servers[name] = await withFreshServer(name, server, measure);
}
results.loadavg_after = loadavg();

const fmt = (value, digits = 1) =>
  typeof value !== "number" ? "–" : Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(digits);
const lines = [
  `Real graphs against the floor (${results.date}, ${results.cores} cores, load average ${results.loadavg_before.map((l) => l.toFixed(2)).join(" ")} before, ` +
    `${results.loadavg_after.map((l) => l.toFixed(2)).join(" ")} after; medians of ${REPEATS})`,
  "",
  "| server | graph | thread + wait c=32 runs/s | floor (checkpointer) runs/s | ÷ floor | server CPU ms/run | main thread ms/run | busiest other thread ms/run | stateless c=1 p50 ms | floor p50 ms | − floor ms |",
  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
];
for (const [name, server] of Object.entries(results.servers)) {
  if (server.error) {
    lines.push(`| ${name} | failed: ${server.error.split("\n")[0]} |||||||||`);
    continue;
  }
  for (const [graph, r] of Object.entries(server.graphs)) {
    const floorRate = r.floor.invoke_checkpointer.per_second;
    lines.push(
      `| ${name} | ${graph} | ${fmt(r.thread.per_second)} | ${fmt(floorRate)} | ${fmt(r.thread.per_second / floorRate, 2)}× | ` +
        `${fmt(r.thread.server_cpu_ms_per_run, 2)} | ${fmt(r.thread.main_thread_cpu_ms_per_run, 2)} | ` +
        `${fmt(r.thread.busiest_other_thread_cpu_ms_per_run, 2)} | ${fmt(r.wait1.p50_ms, 2)} | ${fmt(r.floor.invoke.p50_ms, 2)} | ` +
        `${fmt(r.wait1.p50_ms - r.floor.invoke.p50_ms, 2)} |`,
    );
  }
}
const pg = results.servers.berth_pg?.graphs;
// Against SQLite's default (one thread) and `auto` (both cores under load).
const sqlites = ["berth", "berth_auto"].filter((name) => results.servers[name]?.graphs);
if (pg && sqlites.length > 0) {
  lines.push(
    "",
    "| SQLite server | graph | PG ÷ SQLite thread + wait c=32 | PG ÷ SQLite stateless c=1 p50 |",
    "|---|---|---:|---:|",
  );
  for (const name of sqlites) {
    const sqlite = results.servers[name].graphs;
    for (const graph of GRAPHS)
      lines.push(
        `| ${name} | ${graph} | ${fmt(pg[graph].thread.per_second / sqlite[graph].thread.per_second, 2)}× | ` +
          `${fmt(pg[graph].wait1.p50_ms / sqlite[graph].wait1.p50_ms, 2)}× |`,
      );
  }
}
if (!SERVERS.reference) lines.push("", "(reference not measured: bench/ is not installed; `npm run bench` installs it)");
mkdirSync(join(benchDir, "results"), { recursive: true });
const file = join(benchDir, "results", `graphs-vs-floor-${results.date.replace(/[:.]/g, "-")}.json`);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(`${lines.join("\n")}\n\nJSON: ${file}\n`);
