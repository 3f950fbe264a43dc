#!/usr/bin/env node
// `node bench/soak.mjs`: does one server process keep its memory over many runs? BENCH_SOAK_CYCLES (100,000) cycles of
// `POST /threads` → `POST /threads/{id}/runs/wait` (bench/graphs' `trivial` graph) → `DELETE /threads/{id}`, at a steady
// BENCH_SOAK_CONCURRENCY (8) from a load process of its own, against one `berth dev` (SQLite in a temp directory,
// LOG_LEVEL=warn). The server's RSS is sampled every 500 ms, but V8 lets garbage pile up between major collections (the
// RSS of a healthy server saw-tooths by a third), so the two figures compared are taken right after a full collection
// the script asks for through the inspector (the server runs with `--inspect=127.0.0.1:0`): once the first
// BENCH_SOAK_WARMUP cycles are done (default 10,000, or a tenth of the cycles when fewer), and once all are. Reported: those
// two RSS, the growth in %, the peak and the median of the samples. NODE_OPTIONS is passed on to the server, for heap
// snapshots (`--heapsnapshot-signal=SIGUSR2`, written to the server's working directory, the repository's root). Prints a
// markdown table, a JSON line, and writes bench/results/soak-<time>.json. Not a test: the figures depend on the machine.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { benchDir, berthDevArgs, ensureInstalled, freePort, median, root, waitForOk } from "./common.mjs";

const CYCLES = Number(process.env.BENCH_SOAK_CYCLES ?? 100_000);
const CONCURRENCY = Number(process.env.BENCH_SOAK_CONCURRENCY ?? 8);
const WARMUP = Number(process.env.BENCH_SOAK_WARMUP ?? Math.min(10_000, Math.floor(CYCLES / 10)));
const SAMPLE_MS = 500;
/** Progress lines from the load process, this many cycles apart. */
const PROGRESS_EVERY = 100;

const log = (text) => process.stderr.write(`bench: ${text}\n`);

// Load mode: `node soak.mjs --load <url> <cycles> <concurrency>` runs the cycles and prints `{"done": n}` lines as it
// goes, then one result line. A process of its own, so the load generator's memory and CPU are not the server's.
if (process.argv[2] === "--load") {
  const [url, cycles, concurrency] = [process.argv[3], Number(process.argv[4]), Number(process.argv[5])];
  const json = { "content-type": "application/json" };
  const call = async (method, path, body) => {
    const response = await fetch(url + path, { method, headers: json, body: body && JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 200)}`);
    return text.trim() ? JSON.parse(text) : null;
  };
  let started = 0;
  let done = 0;
  let failures = 0;
  let firstFailure;
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < cycles) {
        started++;
        try {
          const thread = await call("POST", "/threads", {});
          const output = await call("POST", `/threads/${thread.thread_id}/runs/wait`, {
            assistant_id: "trivial",
            input: { text: "hi" },
          });
          if (output?.text !== "echo: hi") throw new Error(`unexpected output ${JSON.stringify(output).slice(0, 200)}`);
          await call("DELETE", `/threads/${thread.thread_id}`);
        } catch (error) {
          failures++;
          firstFailure ??= error.message;
        }
        done++;
        if (done % PROGRESS_EVERY === 0) process.stdout.write(`${JSON.stringify({ done })}\n`);
      }
    }),
  );
  const seconds = (performance.now() - begin) / 1000;
  process.stdout.write(`${JSON.stringify({ result: { cycles: done, failures, first_failure: firstFailure, seconds } })}\n`);
  process.exit(0);
}

/**
 * A full garbage collection of the server (twice: the first one's finalizers free more), through the inspector's
 * HeapProfiler.collectGarbage, from a short-lived process (WebSocket is behind a flag in Node.js 20).
 */
function collectGarbage(inspectorUrl) {
  const script = `
    const socket = new WebSocket(${JSON.stringify(inspectorUrl)});
    let id = 0;
    const send = () => socket.send(JSON.stringify({ id: ++id, method: "HeapProfiler.collectGarbage" }));
    socket.onopen = send;
    socket.onmessage = (message) => {
      if (JSON.parse(message.data).id !== id) return;
      if (id < 2) send();
      else socket.close();
    };
    socket.onerror = (error) => { console.error(String(error.message ?? error)); process.exit(1); };`;
  const result = spawnSync(process.execPath, ["--experimental-websocket", "--no-warnings", "-e", script], {
    encoding: "utf8",
    timeout: 60_000,
  });
  if (result.status !== 0) throw new Error(`collecting the server's garbage failed: ${result.stderr}`);
}

/** The RSS after a full collection, once freed pages had a moment to go back to the system. */
async function collectedRssMb(pid, inspectorUrl) {
  collectGarbage(inspectorUrl);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  return rssMb(pid);
}

function rssMb(pid) {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb ?? 0) / 1024;
}

/** Runs the load process to its end; `progress(done)` on each progress line. */
function runLoad(url, progress) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--load", url, String(CYCLES), String(CONCURRENCY)], {
    cwd: benchDir,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let result;
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line);
    if (message.result) result = message.result;
    else progress(message.done);
  });
  return new Promise((resolve, reject) =>
    child.once("exit", (code) => (code === 0 && result ? resolve(result) : reject(new Error(`load exited with ${code}`)))),
  );
}

ensureInstalled(root);
ensureInstalled(benchDir);
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const dataDir = mkdtempSync(join(tmpdir(), "berth-bench-soak-"));
const nodeOptions = `${process.env.NODE_OPTIONS ?? ""} --inspect=127.0.0.1:0`.trim();
const env = { ...process.env, NODE_OPTIONS: nodeOptions, DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "warn" };
const server = spawn(process.execPath, berthDevArgs(port, dataDir), { cwd: root, env, stdio: ["ignore", "ignore", "pipe"] });
let stderr = "";
server.stderr.on("data", (chunk) => (stderr += chunk));
const inspectorUrl = () => /Debugger listening on (ws:\/\/\S+)/.exec(stderr)?.[1];
const samples = []; // [cycles done, RSS MB]
let done = 0;
let result;
try {
  await waitForOk(url, server, 120);
  log(`berth dev ${url} (pid ${server.pid}, data ${dataDir}): ${CYCLES} cycles at concurrency ${CONCURRENCY}`);
  const inspector = inspectorUrl();
  if (!inspector) throw new Error("the server's inspector URL was not in its output");
  const idle = await collectedRssMb(server.pid, inspector);
  const sampler = setInterval(() => samples.push([done, rssMb(server.pid)]), SAMPLE_MS);
  let nextReport = 0;
  let warming;
  const load = await runLoad(url, (n) => {
    done = n;
    if (n >= WARMUP && !warming) {
      // While the load goes on: what a run holds in flight is small beside the RSS.
      warming = collectedRssMb(server.pid, inspector);
      warming.then((rss) => log(`${n} cycles (warm-up done), RSS ${rss.toFixed(1)} MB after a full collection`));
    }
    if (n >= nextReport) {
      log(`${n} cycles, RSS ${rssMb(server.pid).toFixed(1)} MB`);
      nextReport = n + Math.max(1_000, Math.floor(CYCLES / 20));
    }
  });
  clearInterval(sampler);
  const warm = await warming;
  const end = await collectedRssMb(server.pid, inspector);
  const sampled = samples.map(([, rss]) => rss);
  result = {
    date: new Date().toISOString(),
    cycles: load.cycles,
    failures: load.failures,
    first_failure: load.first_failure,
    seconds: load.seconds,
    cycles_per_second: load.cycles / load.seconds,
    concurrency: CONCURRENCY,
    warmup_cycles: WARMUP,
    idle_rss_mb: idle,
    warm_rss_mb: warm,
    end_rss_mb: end,
    growth_pct: ((end - warm) / warm) * 100,
    peak_rss_mb: Math.max(...sampled),
    median_rss_mb: median(sampled),
    samples,
  };
} catch (error) {
  log(`${error.message}\n${stderr.slice(-2000)}`);
  process.exitCode = 1;
} finally {
  server.kill("SIGTERM");
  await new Promise((resolve) => (server.exitCode !== null ? resolve() : server.once("exit", resolve)));
  rmSync(dataDir, { recursive: true, force: true });
}

if (result) {
  const mb = (value) => `${value.toFixed(1)} MB`;
  const lines = [
    `Soak: ${result.cycles} cycles (thread create → runs/wait → thread delete) at concurrency ${CONCURRENCY}, ${result.failures} failed, ${result.cycles_per_second.toFixed(0)} cycles/s`,
    "",
    "RSS after a full collection: idle, after the warm-up, at the end; then the growth, and the peak and median of the samples",
    "",
    "| idle | after warm-up | at the end | growth | peak sampled | median sampled |",
    "|---|---|---|---|---|---|",
    `| ${mb(result.idle_rss_mb)} | ${mb(result.warm_rss_mb)} (${WARMUP} cycles) | ${mb(result.end_rss_mb)} (${result.cycles} cycles) | ${result.growth_pct.toFixed(1)} % | ${mb(result.peak_rss_mb)} | ${mb(result.median_rss_mb)} |`,
  ];
  mkdirSync(join(benchDir, "results"), { recursive: true });
  const file = join(benchDir, "results", `soak-${result.date.replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2));
  const { samples: _samples, ...summary } = result;
  process.stdout.write(`${lines.join("\n")}\n\nJSON: ${JSON.stringify(summary)}\n${file}\n`);
}
