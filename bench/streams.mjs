#!/usr/bin/env node
// `node bench/streams.mjs`: ten thousand concurrent streams on one Berth process (`berth dev`, SQLite in a temp dir).
// Per round, BENCH_RUNS (100) runs of the `drip` graph (BENCH_TOKENS, 40, custom events one every BENCH_TOKEN_MS, 250) are
// started at once, then BENCH_STREAMS (10000) subscribers attach to them (BENCH_STREAMS / BENCH_RUNS per run) from
// BENCH_LOAD_PROCESSES (2) load processes (this script in `--load` mode), arriving at BENCH_ARRIVAL_RATE (1000) per second in
// all (open loop: a slow server does not slow the arrivals; at most BENCH_CONNECTING, 1024, per process wait for their first
// event), each from the run's first event:
//   classic:  `GET /threads/{id}/runs/{run_id}/stream` with `Last-Event-ID: -1` (node:http, a socket per stream);
//   v2-sse:   `POST /threads/{id}/stream/events` {channels: custom, lifecycle; since: 0} (node:http);
//   v2-ws:    `GET /threads/{id}/stream/events` over a WebSocket (the workspace's `ws`), `subscription.subscribe` once open.
// Measured per subscriber: ms from sending the request to its first event (and in the server, from accepting the connection
// to writing its first event: stream-first-writes.mjs, preloaded); its events checked against the run's (ids
// consecutive, no id twice, every token once in order, the run's end). For the server: RSS peak of its process tree (every
// 100 ms), its CPU over the round; and `GET /ok` latency every 50 ms from a third light process (`--probe`) during the round.
// Figures are medians of BENCH_REPEATS (3) rounds per scenario; BENCH_SCENARIOS=classic,v2-sse,v2-ws picks some.
// BENCH_DUMP_OK=<file> writes the probe's `/ok` times of the last round in the order they were taken (one every 50 ms).
// BENCH_EXECUTION_THREAD (off) is the server's BERTH_EXECUTION_THREAD; BENCH_DUMP_FIRSTS=<file> writes each load process's
// times to first event of the last round, in arrival order (to see whether a tail is queueing, late arrivals waiting longer).
// Prints a markdown table and writes bench/results/streams-<time>.json. Not a test: the figures depend on the machine.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import { loadavg, tmpdir } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  benchDir,
  berthDevArgs,
  ensureInstalled,
  freePort,
  median,
  root,
  stopGroup,
  treeCpuMs,
  treeRss,
  waitForOk,
  withoutBerthVariables,
} from "./common.mjs";

const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000);
const RUNS = Math.min(STREAMS, Number(process.env.BENCH_RUNS ?? 100));
const TOKENS = Number(process.env.BENCH_TOKENS ?? 40);
const TOKEN_MS = Number(process.env.BENCH_TOKEN_MS ?? 400);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const LOAD_PROCESSES = Number(process.env.BENCH_LOAD_PROCESSES ?? 2);
const CONNECTING = Number(process.env.BENCH_CONNECTING ?? 1024);
const ARRIVAL_RATE = Number(process.env.BENCH_ARRIVAL_RATE ?? 1000);
const TIMEOUT_S = Number(process.env.BENCH_STREAM_TIMEOUT_S ?? 180);
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? "classic,v2-sse,v2-ws").split(",");
const EXECUTION_THREAD = process.env.BENCH_EXECUTION_THREAD ?? "off";

const log = (text) => process.stderr.write(`bench: ${text}\n`);
const json = { "content-type": "application/json" };

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : null;
}

/** Splits SSE text as it arrives into `{event, id, data}` frames (comments, such as heartbeats, are skipped). */
function sseParser(onFrame) {
  let buffer = "";
  return (chunk) => {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const text = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const frame = {};
      for (const line of text.split("\n")) {
        const colon = line.indexOf(": ");
        if (colon <= 0) continue;
        frame[line.slice(0, colon)] = line.slice(colon + 2);
      }
      if (frame.data !== undefined) onFrame(frame);
    }
  };
}

/**
 * Checks one subscriber's events as they come. Classic: ids 0, 1, 2, … (metadata, then `custom` {i} with i = id - 1),
 * complete at id TOKENS. Protocol v2: seqs rising, the root's `running`, the tokens i = 0 … in order, then the root's
 * terminal lifecycle event.
 */
class Checker {
  constructor(kind) {
    this.kind = kind;
    this.events = 0;
    this.nextToken = 0;
    this.lastId = -1;
    this.errors = [];
    this.done = false;
  }

  classic(frame) {
    this.events++;
    const id = Number(frame.id);
    if (id !== this.lastId + 1) this.errors.push(`id ${id} after ${this.lastId}`);
    this.lastId = id;
    if (frame.event === "custom") this.token(JSON.parse(frame.data).i);
    else if (frame.event !== "metadata") this.errors.push(`event ${frame.event}`);
  }

  protocol(event) {
    this.events++;
    if (event.seq <= this.lastId) this.errors.push(`seq ${event.seq} after ${this.lastId}`);
    this.lastId = event.seq;
    if (event.method === "custom") this.token(event.params.data.payload.i);
    else if (event.method === "lifecycle" && event.params.namespace.length === 0) {
      const what = event.params.data.event;
      if (what === "completed" || what === "failed" || what === "interrupted") {
        if (this.nextToken !== TOKENS) this.errors.push(`end after ${this.nextToken} tokens`);
        this.done = true;
      }
    }
  }

  token(i) {
    if (i !== this.nextToken) this.errors.push(`token ${i} instead of ${this.nextToken}`);
    this.nextToken = i + 1;
  }

  /** Classic streams end with the run: complete when every token came. */
  finish() {
    if (this.kind === "classic") this.done = this.nextToken === TOKENS && this.lastId === TOKENS;
  }
}

/** One subscriber; resolves `{first, checker}` once its stream is complete, failed or timed out. */
function subscribe(kind, url, target, deadline, WebSocket, attached) {
  const checker = new Checker(kind);
  const sent = performance.now();
  let first = null;
  let attachedOnce = false;
  const seen = () => {
    first ??= performance.now() - sent;
    if (!attachedOnce) {
      attachedOnce = true;
      attached();
    }
  };
  return new Promise((resolve) => {
    let finished = false;
    let close = () => {};
    const finish = (error) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (!attachedOnce) attached();
      if (error) checker.errors.push(String(error.message ?? error));
      checker.finish();
      close();
      resolve({ first, checker });
    };
    const timer = setTimeout(() => finish(new Error("timed out")), Math.max(0, deadline - Date.now()));
    if (kind === "v2-ws") {
      const socket = new WebSocket(`${url.replace("http", "ws")}/threads/${target.thread_id}/stream/events`, {
        perMessageDeflate: false,
      });
      close = () => socket.terminate();
      socket.on("open", () =>
        socket.send(
          JSON.stringify({ id: 1, method: "subscription.subscribe", params: { channels: ["custom", "lifecycle"], since: 0 } }),
        ),
      );
      socket.on("message", (raw) => {
        const message = JSON.parse(String(raw));
        if (message.type !== "event") return;
        seen();
        checker.protocol(message);
        if (checker.done) finish();
      });
      socket.on("error", finish);
      socket.on("close", () => finish(checker.done ? undefined : new Error("socket closed")));
      return;
    }
    const classic = kind === "classic";
    const request = http.request(
      classic
        ? `${url}/threads/${target.thread_id}/runs/${target.run_id}/stream`
        : `${url}/threads/${target.thread_id}/stream/events`,
      {
        method: classic ? "GET" : "POST",
        headers: classic ? { "last-event-id": "-1" } : json,
        agent: false,
      },
      (response) => {
        if (response.statusCode !== 200) return finish(new Error(`status ${response.statusCode}`));
        response.setEncoding("utf8");
        const parse = sseParser((frame) => {
          seen();
          if (classic) checker.classic(frame);
          else {
            checker.protocol(JSON.parse(frame.data));
            if (checker.done) finish();
          }
        });
        response.on("data", parse);
        response.on("end", () => finish());
        response.on("error", (error) => finish(finished ? undefined : error));
      },
    );
    close = () => request.destroy();
    request.on("error", (error) => finish(finished ? undefined : error));
    request.end(classic ? undefined : JSON.stringify({ channels: ["custom", "lifecycle"], since: 0 }));
  });
}

// Load mode: `node streams.mjs --load <url> <scenario> <targets file> <index> <processes> <subscribers>`: this process's
// share of the subscribers (every `processes`-th, from `index`), spread over the targets; prints one JSON line.
if (process.argv[2] === "--load") {
  const [url, kind, file, index, processes, total] = process.argv.slice(3);
  const targets = JSON.parse(readFileSync(file, "utf8"));
  const { WebSocket } = createRequire(join(root, "package.json"))("ws");
  const deadline = Date.now() + TIMEOUT_S * 1000;
  // The client's own lag: a starved or saturated load process delays the first events it reads, not the server.
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const cpuBefore = process.cpuUsage();
  const mine = [];
  for (let j = Number(index); j < Number(total); j += Number(processes)) mine.push(targets[j % targets.length]);
  const started = performance.now();
  let connecting = 0;
  let open = 0;
  let peakOpen = 0;
  let lastAttached = 0;
  const waiters = [];
  const results = [];
  const interval = (1000 * Number(processes)) / ARRIVAL_RATE;
  for (const [k, target] of mine.entries()) {
    const due = started + k * interval;
    if (due > performance.now()) await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
    while (connecting >= CONNECTING) await new Promise((resolve) => waiters.push(resolve));
    connecting++;
    open++;
    peakOpen = Math.max(peakOpen, open);
    results.push(
      subscribe(kind, url, target, deadline, WebSocket, () => {
        connecting--;
        lastAttached = performance.now() - started;
        waiters.shift()?.();
      }).then((result) => {
        open--;
        return result;
      }),
    );
  }
  const all = await Promise.all(results);
  const errors = all.flatMap(({ checker }) => checker.errors);
  process.stdout.write(
    `${JSON.stringify({
      subscribers: all.length,
      first_ms: all.map(({ first }) => (first === null ? null : Math.round(first * 10) / 10)),
      complete: all.filter(({ checker }) => checker.done && checker.errors.length === 0).length,
      events: all.reduce((sum, { checker }) => sum + checker.events, 0),
      faulty: all.filter(({ checker }) => checker.errors.length > 0).length,
      error_samples: [...new Set(errors)].slice(0, 5),
      peak_open: peakOpen,
      attach_s: lastAttached / 1000,
      total_s: (performance.now() - started) / 1000,
      load_cpu_pct: (() => {
        const { user, system } = process.cpuUsage(cpuBefore);
        return ((user + system) / 1000 / (performance.now() - started)) * 100;
      })(),
      load_lag_p99_ms: lag.percentile(99) / 1e6,
    })}\n`,
    // A pipe takes what fits and queues the rest: exiting before it drained cut the line short.
    () => process.exit(0),
  );
}

// Probe mode: `GET /ok` every 50 ms on one keep-alive socket until SIGTERM; prints the latencies (ms) as one JSON line.
if (process.argv[2] === "--probe") {
  const url = process.argv[3];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = [];
  let stopping = false;
  process.on("SIGTERM", () => (stopping = true));
  while (!stopping) {
    const start = performance.now();
    await new Promise((resolve) => {
      const request = http.get(`${url}/ok`, { agent }, (response) => {
        response.resume();
        response.on("end", () => {
          latencies.push(performance.now() - start);
          resolve();
        });
      });
      request.on("error", () => {
        latencies.push(null);
        resolve();
      });
    });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 50 - (performance.now() - start))));
  }
  process.stdout.write(`${JSON.stringify(latencies)}\n`, () => process.exit(0));
}

function child(args) {
  const spawned = spawn(process.execPath, [fileURLToPath(import.meta.url), ...args], {
    cwd: benchDir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  spawned.stdout.on("data", (chunk) => (stdout += chunk));
  spawned.stderr.on("data", (chunk) => (stderr += chunk));
  spawned.result = new Promise((resolve, reject) =>
    spawned.on("exit", (code, signal) => {
      if (code !== 0) return reject(new Error(`${args[0]}: exit ${code ?? signal}: ${stderr.slice(-2000)}`));
      try {
        resolve(JSON.parse(stdout.trim().split("\n").at(-1)));
      } catch (error) {
        // A rejection, not a throw from this handler: the run's `finally` then stops the server.
        reject(new Error(`${args[0]}: unreadable output (${error.message}): ${stderr.slice(-2000)}`));
      }
    }),
  );
  return spawned;
}

async function post(url, path, body) {
  const response = await fetch(`${url}${path}`, { method: "POST", headers: json, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

const dripInput = { delay_ms: TOKEN_MS, count: TOKENS };

/** Starts RUNS runs of `drip`, each on a thread of its own: classic background runs, or v2 `run.start`. */
async function startRuns(url, kind, runs = RUNS, input = dripInput) {
  if (kind === "classic") {
    const threads = await Promise.all(Array.from({ length: runs }, () => post(url, "/threads", {})));
    return Promise.all(
      threads.map(async ({ thread_id }) => {
        const run = await post(url, `/threads/${thread_id}/runs`, {
          assistant_id: "drip",
          input,
          stream_mode: ["custom"],
        });
        return { thread_id, run_id: run.run_id };
      }),
    );
  }
  return Promise.all(
    Array.from({ length: runs }, async () => {
      const thread_id = randomUUID();
      const reply = await post(url, `/threads/${thread_id}/commands`, {
        id: 1,
        method: "run.start",
        params: { assistant_id: "drip", input },
      });
      if (reply.type !== "success") throw new Error(JSON.stringify(reply));
      return { thread_id, run_id: reply.result.run_id };
    }),
  );
}

/** One round of a scenario: runs started, subscribers attached by the load processes, the server sampled meanwhile. */
async function round(url, pid, kind, workDir) {
  const probe = child(["--probe", url]);
  await new Promise((resolve) => setTimeout(resolve, 200));
  writeFileSync(firstWritesFile, "");
  const cpuBefore = treeCpuMs(pid);
  const startedAt = performance.now();
  let peak = treeRss(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, treeRss(pid))), 100);
  const targets = await startRuns(url, kind);
  const file = join(workDir, `targets-${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify(targets));
  const loads = Array.from({ length: LOAD_PROCESSES }, (_, i) =>
    child(["--load", url, kind, file, String(i), String(LOAD_PROCESSES), String(STREAMS)]),
  );
  const measured = await Promise.all(loads.map((load) => load.result)).catch((error) => {
    clearInterval(sampler);
    probe.result.catch(() => {}); // killed: its figures are not wanted
    for (const spawned of [probe, ...loads]) spawned.kill("SIGKILL");
    throw error;
  });
  const seconds = (performance.now() - startedAt) / 1000;
  const cpu = treeCpuMs(pid) - cpuBefore;
  // The server flushes its first-write times every 250 ms.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const serverFirsts = readFileSync(firstWritesFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .sort((a, b) => a - b);
  clearInterval(sampler);
  probe.kill("SIGTERM");
  const samples = await probe.result;
  if (process.env.BENCH_DUMP_OK) writeFileSync(process.env.BENCH_DUMP_OK, JSON.stringify(samples));
  const ok = samples.filter((v) => v !== null).sort((a, b) => a - b);
  const probeFailures = samples.length - ok.length;
  const firsts = measured
    .flatMap((m) => m.first_ms)
    .filter((v) => v !== null)
    .sort((a, b) => a - b);
  const sum = (key) => measured.reduce((total, m) => total + m[key], 0);
  if (process.env.BENCH_DUMP_FIRSTS)
    writeFileSync(process.env.BENCH_DUMP_FIRSTS, JSON.stringify(measured.map((m) => m.first_ms)));
  return {
    subscribers: sum("subscribers"),
    complete: sum("complete"),
    faulty: sum("faulty"),
    never_got_an_event: sum("subscribers") - firsts.length,
    events: sum("events"),
    expected_events: sum("subscribers") * (kind === "classic" ? TOKENS + 1 : TOKENS + 2),
    peak_open: sum("peak_open"),
    attach_s: Math.max(...measured.map((m) => m.attach_s)),
    first_event_p50_ms: percentile(firsts, 0.5),
    first_event_p99_ms: percentile(firsts, 0.99),
    first_event_max_ms: firsts.at(-1) ?? null,
    server_first_write_count: serverFirsts.length,
    server_first_write_p50_ms: percentile(serverFirsts, 0.5),
    server_first_write_p99_ms: percentile(serverFirsts, 0.99),
    server_first_write_max_ms: serverFirsts.at(-1) ?? null,
    ok_p50_ms: percentile(ok, 0.5),
    ok_p99_ms: percentile(ok, 0.99),
    ok_max_ms: ok.at(-1) ?? null,
    ok_samples: ok.length,
    ok_failures: probeFailures,
    load_cpu_pct: Math.max(...measured.map((m) => m.load_cpu_pct)),
    load_lag_p99_ms: Math.max(...measured.map((m) => m.load_lag_p99_ms)),
    server_rss_peak_mb: peak,
    server_cpu_pct: (cpu / 1000 / seconds) * 100,
    server_cpu_ms_per_stream: cpu / sum("subscribers"),
    round_s: seconds,
    load_average_1m: loadavg()[0],
    error_samples: [...new Set(measured.flatMap((m) => m.error_samples))].slice(0, 5),
  };
}

ensureInstalled(root);
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const dataDir = mkdtempSync(join(tmpdir(), "berth-bench-streams-"));
const firstWritesFile = join(mkdtempSync(join(tmpdir(), "berth-bench-first-writes-")), "first-writes.txt");
const serverFlags = [
  ...(process.env.BENCH_NODE_OPTIONS?.split(" ") ?? []),
  "--import",
  join(benchDir, "stream-first-writes.mjs"),
];
const server = spawn(process.execPath, [...serverFlags, ...berthDevArgs(port, dataDir)], {
  cwd: root,
  env: {
    ...withoutBerthVariables(process.env),
    BENCH_FIRST_WRITES_FILE: firstWritesFile,
    DATABASE_URL: "",
    REDIS_URL: "",
    LOG_LEVEL: "warn",
    BERTH_EXECUTION_THREAD: EXECUTION_THREAD,
  },
  detached: true,
  stdio: ["ignore", "ignore", "pipe"],
});
let serverErr = "";
server.stderr.on("data", (chunk) => (serverErr = (serverErr + chunk).slice(-4000)));
const results = {
  date: new Date().toISOString(),
  streams: STREAMS,
  runs: RUNS,
  tokens: TOKENS,
  token_ms: TOKEN_MS,
  arrival_rate: ARRIVAL_RATE,
  repeats: REPEATS,
  load_processes: LOAD_PROCESSES,
  scenarios: {},
};
const workDir = mkdtempSync(join(tmpdir(), "berth-bench-streams-targets-"));
try {
  await waitForOk(url, server, 120);
  // Warm-up: the graph loaded, each path JIT-compiled, on a tenth of the load.
  log("warm-up");
  for (const kind of SCENARIOS) {
    const quick = await (async () => {
      const targets = await startRuns(url, kind, 10, { ...dripInput, delay_ms: 50 });
      const file = join(workDir, "warm.json");
      writeFileSync(file, JSON.stringify(targets));
      return child(["--load", url, kind, file, "0", "1", String(Math.min(200, STREAMS))]).result;
    })();
    if (quick.faulty) log(`warm-up ${kind}: ${quick.faulty} faulty: ${quick.error_samples.join("; ")}`);
  }
  results.idle_rss_mb = treeRss(server.pid);
  for (const kind of SCENARIOS) {
    const rounds = [];
    for (let i = 0; i < REPEATS; i++) {
      log(`${kind}: round ${i + 1}/${REPEATS}, ${STREAMS} subscribers over ${RUNS} runs`);
      rounds.push(await round(url, server.pid, kind, workDir));
      const last = rounds.at(-1);
      log(
        `  first event p99 ${last.first_event_p99_ms?.toFixed(1)} ms, /ok p99 ${last.ok_p99_ms?.toFixed(1)} ms, ` +
          `RSS ${last.server_rss_peak_mb.toFixed(0)} MB, complete ${last.complete}/${last.subscribers}, load ${last.load_average_1m.toFixed(2)}`,
      );
    }
    results.scenarios[kind] = {
      rounds,
      median: Object.fromEntries(
        Object.keys(rounds[0])
          .filter((key) => typeof rounds[0][key] === "number")
          .map((key) => [key, median(rounds.map((r) => r[key]))]),
      ),
    };
  }
} catch (error) {
  results.error = `${error.message}\n${serverErr}`;
  log(results.error);
} finally {
  await stopGroup(server);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
  rmSync(dirname(firstWritesFile), { recursive: true, force: true });
}

const fmt = (value) =>
  typeof value !== "number" ? "–" : Number.isInteger(value) || Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(1);
const rows = [
  ["subscribers complete (every event once, in order)", "complete", ""],
  ["subscribers with a lost, repeated or misordered event", "faulty", "0"],
  ["events received / expected", (m) => `${fmt(m.events)} / ${fmt(m.expected_events)}`, ""],
  ["streams open at once (peak)", "peak_open", ""],
  ["s until the last subscriber got its first event", "attach_s", ""],
  ["first event p50 ms", "first_event_p50_ms", ""],
  ["first event p99 ms", "first_event_p99_ms", "≤ 100"],
  ["server: connection accepted to first event written, p50 ms", "server_first_write_p50_ms", ""],
  ["server: connection accepted to first event written, p99 ms", "server_first_write_p99_ms", ""],
  ["`/ok` p50 ms (every 50 ms, during the round)", "ok_p50_ms", ""],
  ["`/ok` p99 ms", "ok_p99_ms", "≤ 20"],
  ["`/ok` max ms", "ok_max_ms", ""],
  ["server RSS peak MB", "server_rss_peak_mb", "≤ 1536"],
  ["server CPU % (of one core)", "server_cpu_pct", ""],
  ["server CPU ms per stream (runs included)", "server_cpu_ms_per_stream", ""],
  ["load process CPU % (the busier)", "load_cpu_pct", ""],
  ["load process event-loop lag p99 ms (the worse)", "load_lag_p99_ms", ""],
  ["round s", "round_s", ""],
  ["load average (1 min) at the round's end", "load_average_1m", ""],
];
const kinds = Object.keys(results.scenarios);
const lines = [
  `${STREAMS} streams over ${RUNS} runs of \`drip\` (${TOKENS} tokens, one per ${TOKEN_MS} ms), arriving at ${ARRIVAL_RATE}/s; ` +
    `medians of ${REPEATS} rounds; ` +
    `idle RSS ${fmt(results.idle_rss_mb)} MB`,
  "",
  `| measure | target | ${kinds.join(" | ")} |`,
  `|---|---:|${kinds.map(() => "---:").join("|")}|`,
  ...rows.map(
    ([label, key, target]) =>
      `| ${label} | ${target} | ${kinds
        .map((kind) => {
          const m = results.scenarios[kind].median;
          return typeof key === "function" ? key(m) : fmt(m[key]);
        })
        .join(" | ")} |`,
  ),
];
if (results.error) lines.push("", `error: ${results.error}`);
mkdirSync(join(benchDir, "results"), { recursive: true });
const out = join(benchDir, "results", `streams-${results.date.replace(/[:.]/g, "-")}.json`);
writeFileSync(out, JSON.stringify(results, null, 2));
process.stdout.write(`${lines.join("\n")}\n\n${out}\n`);
