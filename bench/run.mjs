#!/usr/bin/env node
// `npm run bench`: starts each server on a free loopback port with the same
// langgraph.json, measures it with a separate load-generator process, stops it,
// and prints a markdown table (plus bench/results/<time>.json).
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchDir, berthDevArgs, ensureInstalled, freePort, median, root, treeRss, waitForOk } from "./common.mjs";

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const QUICK = process.env.BENCH_QUICK === "1";

const SERVERS = [
  {
    name: "reference",
    label: "reference (@langchain/langgraph-api 1.5.1, langgraphjs dev)",
    command: (port) => [
      join(benchDir, "node_modules", ".bin", "langgraphjs"),
      ["dev", "--no-browser", "--no-reload", "-p", String(port), "-c", join(benchDir, "graphs", "langgraph.json")],
      { cwd: benchDir },
    ],
  },
  {
    name: "berth",
    label: "Berth embedded (SQLite)",
    command: (port) => [
      process.execPath,
      berthDevArgs(port, mkdtempSync(join(tmpdir(), "berth-bench-"))),
      { cwd: root, env: { ...process.env, DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "warn" } },
    ],
  },
];

if (process.env.DATABASE_URL && process.env.REDIS_URL) {
  const { freshDatabase } = await import("./scale-out.mjs");
  const databaseUrl = await freshDatabase(process.env.DATABASE_URL);
  SERVERS.push({
    name: "berth_pg",
    label: "Berth PostgreSQL + Redis (one process)",
    command: (port) => [
      process.execPath,
      [join(root, "packages", "cli", "bin", "berth.mjs"), "serve", join(benchDir, "graphs"), "--port", String(port)],
      { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl, BERTH_REDIS_PREFIX: "berth_bench", LOG_LEVEL: "warn" } },
    ],
  });
}

function loadProcess(url, scenario, options) {
  const result = spawnSync(process.execPath, [join(benchDir, "load.mjs"), url, scenario, JSON.stringify(options)], {
    cwd: benchDir,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`load ${scenario} failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split("\n").at(-1));
}

/** Repeats a scenario and keeps the median of each numeric field. */
function repeated(url, scenario, options) {
  const runs = Array.from({ length: REPEATS }, () => loadProcess(url, scenario, options));
  return Object.fromEntries(Object.keys(runs[0]).map((key) => [key, median(runs.map((r) => r[key]))]));
}

const scale = QUICK ? 0.2 : 1;
const PLAN = {
  ok: { concurrency: 32, seconds: QUICK ? 2 : 5 },
  wait1: { concurrency: 1, requests: Math.ceil(1500 * scale), seconds: 20 },
  wait32: { concurrency: 32, requests: Math.ceil(3000 * scale), seconds: 20 },
  threadWait32: { concurrency: 32, requests: Math.ceil(1000 * scale), seconds: 20 },
  stream: { requests: Math.ceil(100 * scale), seconds: 20 },
  streams: { streams: 1000, holdMs: 100 },
};

async function measureServer(server) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const [command, args, options] = server.command(port);
  const started = performance.now();
  const child = spawn(command, args, { ...options, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  try {
    await waitForOk(url, child, 120);
    const startup_s = (performance.now() - started) / 1000;
    // Warm-up: every graph loaded and JIT-compiled before measuring.
    loadProcess(url, "statelessWait", { concurrency: 4, requests: 200, seconds: 30 });
    loadProcess(url, "firstEvent", { requests: 5, seconds: 30 });
    const idle_rss_mb = treeRss(child.pid);
    let peak = idle_rss_mb;
    const sampler = setInterval(() => (peak = Math.max(peak, treeRss(child.pid))), 100);
    const result = { startup_s, idle_rss_mb };
    const step = (name, fn) => {
      process.stderr.write(`bench: ${server.name} ${name}\n`);
      result[name] = fn();
    };
    step("ok", () => repeated(url, "ok", PLAN.ok));
    step("wait1", () => repeated(url, "statelessWait", PLAN.wait1));
    step("wait32", () => repeated(url, "statelessWait", PLAN.wait32));
    step("threadWait32", () => repeated(url, "threadWait", PLAN.threadWait32));
    step("stream", () => repeated(url, "firstEvent", PLAN.stream));
    let streamsPeak = treeRss(child.pid);
    const streamSampler = setInterval(() => (streamsPeak = Math.max(streamsPeak, treeRss(child.pid))), 50);
    step("streams", () => loadProcess(url, "manyStreams", PLAN.streams));
    clearInterval(streamSampler);
    result.streams.rss_mb = streamsPeak;
    clearInterval(sampler);
    result.peak_rss_mb = Math.max(peak, streamsPeak);
    return result;
  } catch (error) {
    return { error: `${error.message}\n${stderr.slice(-2000)}` };
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)));
  }
}

ensureInstalled(root);
ensureInstalled(benchDir);
const floor = JSON.parse(spawnSync(process.execPath, [join(benchDir, "floor.mjs")], { cwd: benchDir, encoding: "utf8" }).stdout);
const results = { date: new Date().toISOString(), repeats: REPEATS, plan: PLAN, floor, servers: {} };
const only = process.env.BENCH_SERVERS?.split(",");
for (const server of SERVERS.filter((s) => !only || only.includes(s.name))) {
  process.stderr.write(`bench: starting ${server.label}\n`);
  results.servers[server.name] = { label: server.label, ...(await measureServer(server)) };
}
if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
  process.stderr.write("bench: Berth with PostgreSQL + Redis skipped (set DATABASE_URL and REDIS_URL)\n");
}

if (process.env.DATABASE_URL && process.env.REDIS_URL && !only) {
  process.stderr.write("bench: scale-out (1 API + 1 or 2 worker processes, PostgreSQL + Redis)\n");
  const { scaleOut } = await import("./scale-out.mjs");
  results.scale_out = await scaleOut({ port: await freePort(), repeats: REPEATS, requests: PLAN.threadWait32.requests });
}

mkdirSync(join(benchDir, "results"), { recursive: true });
const file = join(benchDir, "results", `${results.date.replace(/[:.]/g, "-")}.json`);
writeFileSync(file, JSON.stringify(results, null, 2));
const { renderTable } = await import("./table.mjs");
process.stdout.write(`${renderTable(results)}\nJSON: ${file}\n`);
