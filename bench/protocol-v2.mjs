#!/usr/bin/env node
// `node bench/protocol-v2.mjs`: protocol v2 (thread-centric commands and event streams) beside the classic run stream, on
// Berth and on the reference, each server started fresh on a free loopback port with bench/graphs/langgraph.json.
//   1. First event, BENCH_REQUESTS (50) sequential runs of the `tokens` graph per load process, alternating:
//      - v2: `POST /threads/<new uuid>/stream/events` (channels values, lifecycle, messages); once its headers are in,
//        `run.start` through `POST /threads/<uuid>/commands`; ms from sending the command to the first event frame, and to
//        the root's terminal `lifecycle` event; plus the ms the events POST took to answer its headers;
//      - classic: a thread created beforehand, then `POST /threads/{id}/runs/stream` (values + messages-tuple); ms from
//        sending it to its first event, and to the stream's end.
//   2. Subscribers: BENCH_SUBSCRIBERS (1000) WebSocket clients (`ws`, the workspace's) on `GET /threads/<uuid>/stream/events`
//      of ONE thread (the fan-out of one run, the worst case for a process), each sending `subscription.subscribe` (values,
//      lifecycle) once open; then one `run.start` (`tokens`) through `POST /commands`; ms until every client received the
//      root's terminal `lifecycle` event (and the median client's), the seconds to open the sockets, the server's peak RSS
//      (sampled every 50 ms) and its CPU ms (its process tree's, from /proc) over the scenario. The reference keeps one
//      WebSocket sink per thread (the last socket opened), so there one client of the thousand gets every event.
//   3. The same spread out: BENCH_SUBSCRIBERS threads with one subscriber each and a run on each, all started at once
//      (the case the reference serves; its job slots, 10 by default, then bound the figure).
// Each figure is the median of BENCH_REPEATS (3) load processes, each a process of its own (this script in `--load` mode).
// BENCH_SERVERS=berth (or reference) runs one. Prints a markdown table, a JSON line, and writes
// bench/results/protocol-v2-<time>.json. Not a test: the figures depend on the machine.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
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
  treeRss,
  withFreshServer,
  withoutBerthVariables,
} from "./common.mjs";

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 50);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
/** After the first client saw the end, how long without any event means the others will not see theirs. */
const IDLE_MS = 5000;

const log = (text) => process.stderr.write(`bench: ${text}\n`);
const json = { "content-type": "application/json" };
const tokensRun = { assistant_id: "tokens", input: { messages: [{ type: "human", content: "hi" }] } };

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : null;
}

/** True for the root's last lifecycle event of a run. */
function isRootEnd(event) {
  return (
    event.method === "lifecycle" &&
    event.params?.namespace?.length === 0 &&
    ["completed", "failed", "interrupted"].includes(event.params.data?.event)
  );
}

// Commands go through node:http with a keep-alive pool of 32 sockets, as load.mjs sends its requests: a thousand
// `run.start` at once then queue in the client, not in the server's listen backlog (which resets connections beyond it).
const commandAgent = new http.Agent({ keepAlive: true, maxSockets: 32 });

function command(url, threadId, method, params) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}/threads/${threadId}/commands`,
      { method: "POST", headers: json, agent: commandAgent },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (text += chunk));
        response.on("end", () => {
          const reply = JSON.parse(text);
          if (reply.type === "success") resolve(reply);
          else reject(new Error(`${method}: ${text}`));
        });
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(JSON.stringify({ id: 1, method, params }));
  });
}

/** One v2 run on a fresh thread: ms to open the events stream, then from `run.start` to the first event and to the root's end. */
async function v2Run(url) {
  const threadId = randomUUID();
  const abort = new AbortController();
  const opening = performance.now();
  const response = await fetch(`${url}/threads/${threadId}/stream/events`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ channels: ["values", "lifecycle", "messages"] }),
    signal: abort.signal,
  });
  if (!response.ok) throw new Error(`stream/events ${response.status}`);
  const open = performance.now() - opening;
  let sent = 0;
  let first = null;
  const ended = (async () => {
    for await (const { frame } of sseEvents(response.body)) {
      first ??= performance.now();
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (data && isRootEnd(JSON.parse(data))) return performance.now();
    }
    throw new Error("the events stream ended before the run");
  })();
  sent = performance.now();
  await command(url, threadId, "run.start", tokensRun);
  const end = await ended;
  abort.abort();
  return { open, first: first - sent, end: end - sent };
}

/** One classic run on a thread created beforehand: ms from the request to the first event and to the stream's end. */
async function classicRun(url) {
  const thread = await (await fetch(`${url}/threads`, { method: "POST", headers: json, body: "{}" })).json();
  const sent = performance.now();
  const response = await fetch(`${url}/threads/${thread.thread_id}/runs/stream`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ ...tokensRun, stream_mode: ["values", "messages-tuple"] }),
  });
  if (!response.ok) throw new Error(`runs/stream ${response.status}`);
  let first = null;
  for await (const _ of sseEvents(response.body)) first ??= performance.now() - sent;
  return { first, end: performance.now() - sent };
}

async function firstEventLoad(url, requests) {
  const v2 = [];
  const classic = [];
  for (let i = 0; i < requests; i++) {
    v2.push(await v2Run(url));
    classic.push(await classicRun(url));
  }
  const p50 = (rows, key) =>
    percentile(
      rows.map((r) => r[key]).sort((a, b) => a - b),
      0.5,
    );
  return {
    runs: requests,
    v2_open_p50_ms: p50(v2, "open"),
    v2_first_event_p50_ms: p50(v2, "first"),
    v2_run_end_p50_ms: p50(v2, "end"),
    classic_first_event_p50_ms: p50(classic, "first"),
    classic_run_end_p50_ms: p50(classic, "end"),
  };
}

/**
 * `count` WebSocket subscribers, then the runs: when each saw the root's end. `spread` false: all on one thread and one
 * run; true: one subscriber per thread, `count` threads, a run on each, all started at once.
 */
async function subscribersLoad(url, count, spread) {
  const { WebSocket } = createRequire(join(root, "package.json"))("ws");
  const threadIds = Array.from({ length: spread ? count : 1 }, () => randomUUID());
  let started = null;
  const finals = [];
  let events = 0;
  let failures = 0;
  let repeatedEnds = 0;
  let lastEventAt = 0;
  const sockets = [];
  const opening = performance.now();
  const clients = [];
  // Opened 100 at a time: the listen backlog, not the server, would refuse a thousand SYNs in one go.
  for (let batch = 0; batch < count; batch += 100) {
    const opened = [];
    for (let i = batch; i < Math.min(count, batch + 100); i++) {
      const socket = new WebSocket(`${url.replace("http", "ws")}/threads/${threadIds[i % threadIds.length]}/stream/events`);
      sockets.push(socket);
      let resolveOpen;
      opened.push(new Promise((resolve) => (resolveOpen = resolve)));
      clients.push(
        new Promise((resolve) => {
          socket.on("open", () => {
            socket.send(
              JSON.stringify({ id: 1, method: "subscription.subscribe", params: { channels: ["values", "lifecycle"] } }),
            );
            resolveOpen();
          });
          let ended = false;
          socket.on("message", (raw) => {
            const message = JSON.parse(String(raw));
            if (message.type !== "event") return;
            events++;
            lastEventAt = performance.now();
            if (started === null || !isRootEnd(message)) return;
            if (ended) {
              repeatedEnds++;
              return;
            }
            ended = true;
            finals.push(performance.now() - started);
            resolve();
          });
          socket.on("error", () => {
            failures++;
            resolveOpen();
            resolve();
          });
        }),
      );
    }
    await Promise.all(opened);
  }
  const connect_s = (performance.now() - opening) / 1000;
  started = performance.now();
  await Promise.all(threadIds.map((threadId) => command(url, threadId, "run.start", tokensRun)));
  // Stops waiting when every client has the end, or once some have it and no event came for IDLE_MS (the clients left
  // are not getting theirs: the reference's single sink per thread), or after BENCH_SUBSCRIBER_TIMEOUT_S (120).
  const deadline = started + Number(process.env.BENCH_SUBSCRIBER_TIMEOUT_S ?? 120) * 1000;
  const stalled = new Promise((resolve) => {
    const check = setInterval(() => {
      const now = performance.now();
      if (now > deadline || (finals.length > 0 && now - lastEventAt > IDLE_MS)) {
        clearInterval(check);
        resolve();
      }
    }, 100);
  });
  await Promise.race([Promise.all(clients), stalled]);
  for (const socket of sockets) socket.terminate();
  finals.sort((a, b) => a - b);
  return {
    subscribers: count,
    completed: finals.length,
    failures,
    connect_s,
    all_final_ms: finals.length === count ? finals.at(-1) : null,
    median_final_ms: percentile(finals, 0.5),
    events_each: events / Math.max(1, finals.length),
    repeated_ends: repeatedEnds,
  };
}

// Load mode: `node protocol-v2.mjs --load <url> firstEvent|subscribers <n>` prints one JSON line. A process of its own,
// so the clients do not share an event loop with this script's samplers.
if (process.argv[2] === "--load") {
  const [url, scenario, n] = [process.argv[3], process.argv[4], Number(process.argv[5])];
  // A connection the server resets under this load (the reference did, with a thousand sockets open) is counted, not fatal.
  let connectionResets = 0;
  process.on("uncaughtException", (error) => {
    if (error?.code !== "ECONNRESET" && error?.code !== "EPIPE") throw error;
    connectionResets++;
  });
  // The client's own first fetch (undici's setup, JIT) is not the server's time.
  for (let i = 0; i < 3; i++) await (await fetch(`${url}/ok`)).text();
  const result = scenario === "firstEvent" ? await firstEventLoad(url, n) : await subscribersLoad(url, n, scenario === "spread");
  process.stdout.write(`${JSON.stringify({ ...result, connection_resets: connectionResets })}\n`);
  process.exit(0);
}

const SERVERS = {
  berth: {
    label: "Berth embedded (SQLite, berth dev)",
    command: (port, dataDir) => [
      process.execPath,
      berthDevArgs(port, dataDir),
      { cwd: root, env: { ...withoutBerthVariables(process.env), DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "warn" } },
    ],
  },
  reference: {
    label: "reference (@langchain/langgraph-api 1.5.1, langgraphjs dev)",
    command: (port) => [
      join(benchDir, "node_modules", ".bin", "langgraphjs"),
      ["dev", "--no-browser", "--no-reload", "-p", String(port), "-c", join(benchDir, "graphs", "langgraph.json")],
      { cwd: benchDir },
    ],
  },
};

/** Runs one load process while sampling the server's RSS (peak) and CPU; resolves to its JSON line plus those. */
function loadProcess(url, scenario, n, serverPid) {
  return new Promise((resolve, reject) => {
    const cpuBefore = treeCpuMs(serverPid);
    let peak = treeRss(serverPid);
    const sampler = setInterval(() => (peak = Math.max(peak, treeRss(serverPid))), 50);
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--load", url, scenario, String(n)], {
      cwd: benchDir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("exit", (code) => {
      clearInterval(sampler);
      if (code !== 0) return reject(new Error(`load ${scenario} failed: ${stderr.slice(-2000)}`));
      const measured = JSON.parse(stdout.trim().split("\n").at(-1));
      resolve({ ...measured, server_rss_peak_mb: peak, server_cpu_ms: treeCpuMs(serverPid) - cpuBefore });
    });
  });
}

/** Repeats a scenario and keeps the median of each numeric field. */
async function repeated(url, scenario, n, serverPid) {
  const runs = [];
  for (let i = 0; i < REPEATS; i++) runs.push(await loadProcess(url, scenario, n, serverPid));
  return Object.fromEntries(Object.keys(runs[0]).map((key) => [key, median(runs.map((r) => r[key]))]));
}

function measure(name) {
  return withFreshServer(name, SERVERS[name], async (url, pid) => {
    // Warm-up: the graph loaded and both stream paths JIT-compiled before measuring.
    await loadProcess(url, "firstEvent", 5, pid);
    const result = { idle_rss_mb: treeRss(pid) };
    log(`${name}: first event, ${REQUESTS} runs each of v2 and classic`);
    result.firstEvent = await repeated(url, "firstEvent", REQUESTS, pid);
    log(`${name}: ${SUBSCRIBERS} WebSocket subscribers of one run`);
    result.subscribers = await repeated(url, "subscribers", SUBSCRIBERS, pid);
    log(`${name}: ${SUBSCRIBERS} WebSocket subscribers, one per thread, a run on each`);
    result.spread = await repeated(url, "spread", SUBSCRIBERS, pid);
    const scenarios = [result.firstEvent, result.subscribers, result.spread];
    result.resets = { total: scenarios.reduce((sum, measured) => sum + (measured.connection_resets ?? 0), 0) };
    return result;
  });
}

ensureInstalled(root);
ensureInstalled(benchDir);
const only = process.env.BENCH_SERVERS?.split(",");
const results = { date: new Date().toISOString(), repeats: REPEATS, requests: REQUESTS, subscribers: SUBSCRIBERS, servers: {} };
for (const name of Object.keys(SERVERS).filter((n) => !only || only.includes(n))) {
  log(`starting ${SERVERS[name].label}`);
  results.servers[name] = await measure(name);
}

const fmt = (value) =>
  typeof value !== "number"
    ? "–"
    : Number.isInteger(value) || Math.abs(value) >= 100
      ? value.toFixed(0)
      : value.toFixed(value >= 10 ? 1 : 2);
const ratio = (berth, reference) =>
  typeof berth === "number" && typeof reference === "number" && reference !== 0 ? `${(berth / reference).toFixed(2)}×` : "–";
const rows = [
  ["v2 events POST: headers ms", "firstEvent", "v2_open_p50_ms"],
  ["v2 `run.start` → first event ms", "firstEvent", "v2_first_event_p50_ms"],
  ["v2 `run.start` → root lifecycle end ms", "firstEvent", "v2_run_end_p50_ms"],
  ["classic `/threads/{id}/runs/stream` → first event ms", "firstEvent", "classic_first_event_p50_ms"],
  ["classic `/threads/{id}/runs/stream` → stream end ms", "firstEvent", "classic_run_end_p50_ms"],
  [`${SUBSCRIBERS} WS subscribers: received the end`, "subscribers", "completed"],
  [`${SUBSCRIBERS} WS subscribers: open + subscribe s`, "subscribers", "connect_s"],
  [`${SUBSCRIBERS} WS subscribers: \`run.start\` → all got the end ms`, "subscribers", "all_final_ms"],
  [`${SUBSCRIBERS} WS subscribers: \`run.start\` → median client ms`, "subscribers", "median_final_ms"],
  [`${SUBSCRIBERS} WS subscribers: events per client`, "subscribers", "events_each"],
  [`${SUBSCRIBERS} WS subscribers: server RSS peak MB`, "subscribers", "server_rss_peak_mb"],
  [`${SUBSCRIBERS} WS subscribers: server CPU ms`, "subscribers", "server_cpu_ms"],
  [`${SUBSCRIBERS} threads × 1 WS subscriber: received the end`, "spread", "completed"],
  [`${SUBSCRIBERS} threads × 1 WS subscriber: \`run.start\` → all ends ms`, "spread", "all_final_ms"],
  [`${SUBSCRIBERS} threads × 1 WS subscriber: \`run.start\` → median end ms`, "spread", "median_final_ms"],
  [`${SUBSCRIBERS} threads × 1 WS subscriber: server RSS peak MB`, "spread", "server_rss_peak_mb"],
  [`${SUBSCRIBERS} threads × 1 WS subscriber: server CPU ms`, "spread", "server_cpu_ms"],
  ["connections the server reset (all scenarios)", "resets", "total"],
];
const reference = results.servers.reference ?? {};
const berth = results.servers.berth ?? {};
const lines = [
  `Protocol v2 (\`tokens\` graph; p50 of ${REQUESTS} runs per load process; medians of ${REPEATS})`,
  "",
  "| measure | reference | Berth | Berth/reference |",
  "|---|---:|---:|---:|",
  ["server RSS idle MB", reference.idle_rss_mb, berth.idle_rss_mb],
  ...rows.map(([label, scenario, key]) => [label, reference[scenario]?.[key], berth[scenario]?.[key]]),
].map((row) => (typeof row === "string" ? row : `| ${row[0]} | ${fmt(row[1])} | ${fmt(row[2])} | ${ratio(row[2], row[1])} |`));
for (const [name, server] of Object.entries(results.servers)) {
  if (server.error) lines.push("", `${name}: error: ${server.error}`);
}
mkdirSync(join(benchDir, "results"), { recursive: true });
const file = join(benchDir, "results", `protocol-v2-${results.date.replace(/[:.]/g, "-")}.json`);
writeFileSync(file, JSON.stringify(results, null, 2));
process.stdout.write(`${lines.join("\n")}\n\nJSON: ${JSON.stringify(results)}\n${file}\n`);
