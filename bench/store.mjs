#!/usr/bin/env node
// `node bench/store.mjs`: the long-term memory store (`client.store` of the official SDK) against a real Berth process
// started on bench/projects/store (store.index: the test fixture's deterministic 64-dim embedder, no model), on SQLite
// (`berth dev`, fresh data directory) and, with DATABASE_URL and REDIS_URL, on PostgreSQL + Redis (`berth serve`, a fresh
// database created here and dropped at the end). For each backend:
//   - put / get / search: BENCH_OPS (default 300) sequential operations each after a warm-up, p50 and p95 per operation
//     (search: a query over the namespace the puts filled, limit 10);
//   - search among 10,000 embedded items of one namespace (seeded at concurrency 8): p50 / p95 of 25 queries;
//   - the sweeper: 10,000 items put with per-item ttls (fractional minutes) that all expire at one instant E, between two
//     ticks of the sweeper (BERTH_STORE_SWEEP_SECONDS=1). Its log line "expired store items deleted" is written when a
//     sweep ends; a one-item probe that expires just before E is swept by the previous tick, so
//     sweep duration = (log time of the big sweep) - (log time of the probe's sweep) - 1 s (±1-2 ms: the probe's own
//     sweep and the timer's lateness). Reported per 10,000 rows.
// BENCH_QUICK=1: 100 operations, 1,000 items, 9 queries. Prints a markdown table, a JSON line, and writes
// bench/results/store-<time>.json. Not a test: the figures depend on the machine.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = join(benchDir, "..");
const berthBin = join(root, "packages", "cli", "bin", "berth.mjs");
const project = join(benchDir, "projects", "store");
const QUICK = process.env.BENCH_QUICK === "1";
const OPS = Number(process.env.BENCH_OPS ?? (QUICK ? 100 : 300));
const SEARCH_ITEMS = QUICK ? 1_000 : 10_000;
const SWEEP_ITEMS = QUICK ? 1_000 : 10_000;
const QUERIES = QUICK ? 9 : 25;
const SEED_CONCURRENCY = 8;
const TICK_MS = 1000;

const log = (text) => process.stderr.write(`bench: ${text}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Texts: 8 words of a small vocabulary, from a seeded generator, so every run stores and asks the same things.
const VOCAB = (
  "apple river mountain coffee winter garden python budget travel music doctor meeting invoice holiday kitten " +
  "rocket server backup laptop recipe tomato soccer novel piano camera bridge forest ocean planet castle " +
  "engine market ticket window pencil candle silver yellow purple orange violet summer autumn spring desert " +
  "island valley harbor museum library"
).split(" ");
function words(seed, count) {
  let state = seed * 2654435761;
  const out = [];
  for (let i = 0; i < count; i++) {
    state = Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x9e3779b9;
    out.push(VOCAB[(state >>> 0) % VOCAB.length]);
  }
  return out.join(" ");
}
const itemValue = (i) => ({ text: `note ${i}: ${words(i + 1, 8)}`, n: i });
const queryText = (i) => words(1_000_003 + i, 3);

function stats(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q) => Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))].toFixed(2));
  return { p50_ms: at(0.5), p95_ms: at(0.95), n: sorted.length };
}

async function timed(count, fn) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await fn(i);
    times.push(performance.now() - started);
  }
  return stats(times);
}

/** Runs fn(0..count-1) with `concurrency` in flight; returns the elapsed ms. */
async function pooled(count, concurrency, fn) {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await fn(next++);
    }),
  );
  return performance.now() - started;
}

/** Starts Berth and follows its JSON log: the listening URL, and every sweep's end time and count. */
function startBerth(args, env) {
  const child = spawn(process.execPath, [berthBin, ...args], {
    cwd: root,
    // Info level: the listening line carries the URL and the sweeper logs at info (requests are not logged).
    env: { ...process.env, LOG_LEVEL: "info", BERTH_STORE_SWEEP_SECONDS: String(TICK_MS / 1000), ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const sweeps = [];
  let onSweep = () => {};
  let pending = "";
  const url = new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const line of lines) {
        let entry;
        try {
          entry = JSON.parse(line);
        } catch {
          continue;
        }
        if (entry.msg === "agent server listening") resolve(entry.url);
        if (entry.msg === "expired store items deleted") {
          sweeps.push({ time: entry.time, deleted: entry.deleted });
          onSweep();
        }
      }
    });
    child.once("exit", (code) => reject(new Error(`berth ${args[0]} exited ${code}`)));
  });
  /** Resolves with the next sweep logged after `from` sweeps had been (waits up to timeoutMs). */
  const sweepAfter = (from, timeoutMs) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no sweep logged within ${timeoutMs} ms`)), timeoutMs);
      const check = () => {
        if (sweeps.length <= from) return;
        clearTimeout(timer);
        onSweep = () => {};
        resolve(sweeps[from]);
      };
      onSweep = check;
      check();
    });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", resolve);
      child.kill("SIGTERM");
    });
  return { url, sweeps, sweepAfter, stop };
}

async function measureSweep(client, server, seedMsPerItem) {
  const ttlUntil = (at) => Math.max(at - Date.now(), 1) / 60_000;
  // Probe 1 locates the sweeper's ticks (they come every TICK_MS from the process start).
  let seen = server.sweeps.length;
  await client.store.putItem(["bench", "probe"], "p1", { text: "probe" }, { ttl: 50 / 60_000 });
  const tick = (await server.sweepAfter(seen, TICK_MS * 5)).time;
  // E: the middle of a tick interval, late enough for the puts (1.5x the seeding pace, plus 2 s).
  const needed = Date.now() + SWEEP_ITEMS * seedMsPerItem * 1.5 + 2000;
  const expireAt = tick + Math.ceil((needed - tick) / TICK_MS) * TICK_MS + TICK_MS / 2;
  seen = server.sweeps.length;
  const putMs = await pooled(SWEEP_ITEMS, SEED_CONCURRENCY, (i) =>
    client.store.putItem(["bench", "sweep"], `s${i}`, itemValue(i), { ttl: ttlUntil(expireAt) }),
  );
  if (server.sweeps.length > seen) throw new Error("a sweep ran while the items were put (too slow for the plan)");
  if (Date.now() > expireAt - 1.1 * TICK_MS) throw new Error("the puts ended too close to the expiry instant");
  // Probe 2 expires in the previous tick interval: its sweep ends ~1-2 ms after the tick before the big one.
  await client.store.putItem(["bench", "probe"], "p2", { text: "probe" }, { ttl: ttlUntil(expireAt - TICK_MS) });
  const probe = await server.sweepAfter(seen, expireAt - Date.now() + TICK_MS);
  const big = await server.sweepAfter(seen + 1, expireAt - Date.now() + TICK_MS * 3 + 120_000);
  if (probe.deleted !== 1 || big.deleted !== SWEEP_ITEMS) {
    throw new Error(`unexpected sweeps: probe deleted ${probe.deleted}, batch deleted ${big.deleted} of ${SWEEP_ITEMS}`);
  }
  // The big sweep started at the first tick after the probe's (a running sweep makes later ticks skip).
  const sweepMs = big.time - probe.time - TICK_MS;
  return {
    rows: SWEEP_ITEMS,
    put_s: Number((putMs / 1000).toFixed(1)),
    sweep_ms: sweepMs,
    ms_per_10k_rows: Number(((sweepMs * 10_000) / SWEEP_ITEMS).toFixed(1)),
  };
}

async function measureBackend(backend) {
  const server = startBerth(backend.args, backend.env);
  try {
    const url = await server.url;
    const client = new Client({ apiUrl: url });
    const store = client.store;
    log(`${backend.name}: warm-up`);
    for (let i = 0; i < 30; i++) {
      await store.putItem(["bench", "warm"], `w${i}`, itemValue(i));
      await store.getItem(["bench", "warm"], `w${i}`);
      await store.searchItems(["bench", "warm"], { query: queryText(i), limit: 10 });
    }
    const result = {};
    log(`${backend.name}: ${OPS} puts, gets, searches`);
    result.put = await timed(OPS, (i) => store.putItem(["bench", "ops"], `k${i}`, itemValue(i)));
    result.get = await timed(OPS, async (i) => {
      if (!(await store.getItem(["bench", "ops"], `k${i}`))) throw new Error(`k${i} is missing`);
    });
    result.search = await timed(OPS, async (i) => {
      const { items } = await store.searchItems(["bench", "ops"], { query: queryText(i), limit: 10 });
      if (items.length !== 10) throw new Error(`search found ${items.length}`);
    });

    log(`${backend.name}: seeding ${SEARCH_ITEMS} items (concurrency ${SEED_CONCURRENCY})`);
    const seedMs = await pooled(SEARCH_ITEMS, SEED_CONCURRENCY, (i) => store.putItem(["bench", "search"], `i${i}`, itemValue(i)));
    result.seed_puts_per_s = Math.round((SEARCH_ITEMS * 1000) / seedMs);
    for (let i = 0; i < 3; i++) await store.searchItems(["bench", "search"], { query: queryText(i), limit: 10 });
    result.search_big = {
      items: SEARCH_ITEMS,
      ...(await timed(QUERIES, async (i) => {
        const { items } = await store.searchItems(["bench", "search"], { query: queryText(100 + i), limit: 10 });
        if (items.length !== 10 || typeof items[0].score !== "number") throw new Error("search without scores");
      })),
    };

    log(`${backend.name}: sweep of ${SWEEP_ITEMS} expired items`);
    result.sweep = await measureSweep(client, server, seedMs / SEARCH_ITEMS);
    return result;
  } catch (error) {
    return { error: error.message };
  } finally {
    await server.stop();
  }
}

async function dropDatabase(databaseUrl) {
  const { default: pg } = await import("pg");
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

const results = {
  date: new Date().toISOString(),
  quick: QUICK,
  ops: OPS,
  backends: {},
  reference: "not measured: the reference server's store ignores a put's ttl and index (docs/agent-server.md, Store)",
};

const dataDir = mkdtempSync(join(tmpdir(), "berth-bench-store-"));
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
      env: { DATABASE_URL: databaseUrl, BERTH_REDIS_PREFIX: `berth_bench_store_${Date.now()}` },
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
const pair = (s) => `${s.p50_ms} / ${s.p95_ms} ms`;
const rows = [
  [`put p50 / p95 (${OPS} sequential)`, (r) => pair(r.put)],
  [`get p50 / p95 (${OPS} sequential)`, (r) => pair(r.get)],
  [`search, query, limit 10 (${OPS} items) p50 / p95`, (r) => pair(r.search)],
  [`search, query, limit 10 (${SEARCH_ITEMS.toLocaleString("en")} items) p50 / p95`, (r) => pair(r.search_big)],
  [`seeding puts/s (concurrency ${SEED_CONCURRENCY})`, (r) => String(r.seed_puts_per_s)],
  [`sweep of ${SWEEP_ITEMS.toLocaleString("en")} expired rows`, (r) => `${r.sweep.sweep_ms} ms`],
  ["sweep, ms per 10,000 rows", (r) => `${r.sweep.ms_per_10k_rows} ms`],
];
console.log(`| ${QUICK ? "store (BENCH_QUICK)" : "store"} | ${columns.map((c) => names[c]).join(" | ")} |`);
console.log(`|---|${columns.map(() => "---").join("|")}|`);
for (const [label, pick] of rows) {
  console.log(`| ${label} | ${columns.map((c) => cell(results.backends[c], pick)).join(" | ")} |`);
}
for (const c of columns) {
  if (results.backends[c].error) console.log(`\n${names[c]}: error: ${results.backends[c].error}`);
  if (results.backends[c].skipped) console.log(`\n${names[c]}: SKIPPED (${results.backends[c].skipped})`);
}
console.log(`\nReference server: ${results.reference}.`);
mkdirSync(join(benchDir, "results"), { recursive: true });
const file = join(benchDir, "results", `store-${results.date.replace(/[:.]/g, "-")}.json`);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nJSON ${JSON.stringify(results)}`);
console.log(file);
