#!/usr/bin/env node
// `node bench/crons-webhooks.mjs`: how late crons fire and how soon webhooks arrive, against a real Berth process on
// bench/projects/store's trivial graph, on SQLite (`berth dev`) and, with DATABASE_URL and REDIS_URL, on PostgreSQL +
// Redis (`berth serve`, a fresh database dropped at the end):
//   - cron jitter: BENCH_CRONS (default 3) thread crons firing every second for BENCH_CRON_SECONDS (default 20 s);
//     lateness = the run's created_at - the tick it was made for (metadata.cron_run_date); p50 / p99 / max.
//   - webhook latency: BENCH_WEBHOOKS (default 100) background runs, one after another, each with a webhook to a
//     receiver on loopback; latency = arrival at the receiver - the payload's run_ended_at; p50 / p99 / max.
// The reference server is not measured: its crons are stubs (500) and it has no outbox. Prints a markdown table, a JSON
// line, and writes bench/results/crons-webhooks-<time>.json. Not a test: the figures depend on the machine.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = join(benchDir, "..");
const berthBin = join(root, "packages", "cli", "bin", "berth.mjs");
const project = join(benchDir, "projects", "store");
const CRONS = Number(process.env.BENCH_CRONS ?? 3);
const CRON_SECONDS = Number(process.env.BENCH_CRON_SECONDS ?? 20);
const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 100);

const log = (text) => process.stderr.write(`bench: ${text}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))].toFixed(1));
  return { p50_ms: at(0.5), p99_ms: at(0.99), max_ms: Number(sorted.at(-1).toFixed(1)), n: sorted.length };
}

function startBerth(args, env) {
  const child = spawn(process.execPath, [berthBin, ...args], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: "info", BERTH_WEBHOOK_ALLOW_PRIVATE: "1", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let pending = "";
  const url = new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const line of lines) {
        if (!line.includes("agent server listening")) continue;
        try {
          resolve(JSON.parse(line).url);
        } catch {}
      }
    });
    child.once("exit", (code) => reject(new Error(`berth ${args[0]} exited ${code}`)));
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", resolve);
      child.kill("SIGTERM");
    });
  return { url, stop };
}

/** A webhook receiver on loopback: resolves each run's delivery with its arrival time and body. */
async function startReceiver() {
  const waiting = new Map();
  const arrived = new Map();
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const at = Date.now();
      response.end("ok");
      const payload = JSON.parse(body);
      arrived.set(payload.run_id, { at, payload });
      waiting.get(payload.run_id)?.();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}/hook`;
  const delivery = (runId) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no webhook for run ${runId} within 30 s`)), 30_000);
      const done = () => {
        clearTimeout(timer);
        resolve(arrived.get(runId));
      };
      if (arrived.has(runId)) done();
      else waiting.set(runId, done);
    });
  return { url, delivery, close: () => new Promise((resolve) => server.close(resolve)) };
}

async function measureCrons(client) {
  const threads = await Promise.all(Array.from({ length: CRONS }, () => client.threads.create()));
  const crons = await Promise.all(
    threads.map((thread) =>
      client.crons.createForThread(thread.thread_id, "trivial", {
        schedule: "* * * * * *",
        input: { text: "tick" },
        multitaskStrategy: "enqueue",
      }),
    ),
  );
  await sleep(CRON_SECONDS * 1000);
  await Promise.all(crons.map((cron) => client.crons.update(cron.cron_id, { enabled: false })));
  const late = [];
  for (const thread of threads) {
    for (const run of await client.runs.list(thread.thread_id, { limit: 1000 })) {
      const tick = run.metadata?.cron_run_date;
      if (typeof tick === "string") late.push(Date.parse(run.created_at) - Date.parse(tick));
    }
  }
  await Promise.all(crons.map((cron) => client.crons.delete(cron.cron_id)));
  return { crons: CRONS, seconds: CRON_SECONDS, expected_runs: CRONS * CRON_SECONDS, ...stats(late) };
}

async function measureWebhooks(client, receiver) {
  const thread = await client.threads.create();
  const latencies = [];
  for (let i = 0; i < WEBHOOKS + 5; i++) {
    const run = await client.runs.create(thread.thread_id, "trivial", { input: { text: `w${i}` }, webhook: receiver.url });
    const { at, payload } = await receiver.delivery(run.run_id);
    // The first few warm the path up.
    if (i >= 5) latencies.push(at - Date.parse(payload.run_ended_at));
  }
  return stats(latencies);
}

async function measureBackend(backend) {
  const receiver = await startReceiver();
  const server = startBerth(backend.args, backend.env);
  try {
    const client = new Client({ apiUrl: await server.url });
    log(`${backend.name}: ${CRONS} crons every second for ${CRON_SECONDS} s`);
    const crons = await measureCrons(client);
    log(`${backend.name}: ${WEBHOOKS} webhooks`);
    const webhooks = await measureWebhooks(client, receiver);
    return { crons, webhooks };
  } catch (error) {
    return { error: error.message };
  } finally {
    await server.stop();
    await receiver.close();
  }
}

async function dropDatabase(databaseUrl) {
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${new URL(databaseUrl).pathname.slice(1)} WITH (FORCE)`);
  await admin.end();
}

const results = { date: new Date().toISOString(), backends: {} };
const dataDir = mkdtempSync(join(tmpdir(), "berth-bench-crons-"));
log("SQLite (berth dev)");
results.backends.sqlite = await measureBackend({
  name: "sqlite",
  args: ["dev", "--no-reload", project, "--port", "0", "--data-dir", dataDir],
  env: { DATABASE_URL: "", REDIS_URL: "" },
});
rmSync(dataDir, { recursive: true, force: true });

if (process.env.DATABASE_URL && process.env.REDIS_URL) {
  const { freshDatabase } = await import("./scale-out.mjs");
  const databaseUrl = await freshDatabase(process.env.DATABASE_URL);
  log(`PostgreSQL + Redis (berth serve, database ${new URL(databaseUrl).pathname.slice(1)})`);
  try {
    results.backends.postgres = await measureBackend({
      name: "postgres",
      args: ["serve", project, "--port", "0"],
      env: { DATABASE_URL: databaseUrl, BERTH_REDIS_PREFIX: `berth_bench_crons_${Date.now()}` },
    });
  } finally {
    await sleep(200);
    await dropDatabase(databaseUrl);
  }
} else {
  log("!!! PostgreSQL + Redis SKIPPED: set DATABASE_URL and REDIS_URL to measure them !!!");
  results.backends.postgres = { skipped: "DATABASE_URL and REDIS_URL are not both set" };
}

const names = { sqlite: "SQLite (embedded)", postgres: "PostgreSQL + Redis" };
const columns = Object.keys(results.backends);
const cell = (r, pick) => (r.error ? "error" : r.skipped ? "skipped" : pick(r));
const triple = (s) => `${s.p50_ms} / ${s.p99_ms} / ${s.max_ms} ms (n=${s.n})`;
const rows = [
  ["cron lateness after its tick, p50 / p99 / max", (r) => triple(r.crons)],
  ["webhook arrival after the run ended, p50 / p99 / max", (r) => triple(r.webhooks)],
];
console.log(`| crons and webhooks | ${columns.map((c) => names[c]).join(" | ")} |`);
console.log(`|---|${columns.map(() => "---").join("|")}|`);
for (const [label, pick] of rows) {
  console.log(`| ${label} | ${columns.map((c) => cell(results.backends[c], pick)).join(" | ")} |`);
}
for (const c of columns) {
  if (results.backends[c].error) console.log(`\n${names[c]}: error: ${results.backends[c].error}`);
  if (results.backends[c].skipped) console.log(`\n${names[c]}: SKIPPED (${results.backends[c].skipped})`);
}
mkdirSync(join(benchDir, "results"), { recursive: true });
const file = join(benchDir, "results", `crons-webhooks-${results.date.replace(/[:.]/g, "-")}.json`);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nJSON ${JSON.stringify(results)}`);
console.log(file);
