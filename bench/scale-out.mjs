#!/usr/bin/env node
// Scale-out figures (with DATABASE_URL and REDIS_URL): thread create + wait at
// concurrency 32 with one API process and 1 vs 2 worker processes, on the
// `cpu` graph (a few ms of CPU per run: the graph, not the database, bounds a
// worker) and on the `trivial` one, and one run's stream fanned out to 100
// joiners. Called by run.mjs; `node bench/scale-out.mjs` runs it alone.
import { spawn, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = join(benchDir, "..");
const BERTH = join(root, "packages", "cli", "bin", "berth.mjs");

/** A fresh database, so every bench starts from the same empty state. */
export async function freshDatabase(adminUrl) {
  const { default: pg } = await import("pg");
  const name = `berth_bench_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

function start(role, port, env) {
  const args = [BERTH, "serve", join(benchDir, "graphs"), "--role", role, "--port", String(port)];
  return spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", "pipe", "inherit"] });
}

function ready(child, pattern) {
  return new Promise((resolve, reject) => {
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (pattern.test(output)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}`)));
  });
}

function load(url, scenario, options) {
  const result = spawnSync(process.execPath, [join(benchDir, "load.mjs"), url, scenario, JSON.stringify(options)], {
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout.trim().split("\n").at(-1));
}

function median(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

/** Graphs measured, and the input of each run. */
const GRAPHS = [
  { key: "cpu_", assistant_id: "cpu", input: { work: 5 } },
  { key: "", assistant_id: "trivial", input: { text: "hi" } },
];

export async function scaleOut({ port, repeats, requests }) {
  const results = {};
  for (const workerCount of [1, 2]) {
    const env = {
      ...process.env,
      DATABASE_URL: await freshDatabase(process.env.DATABASE_URL),
      BERTH_REDIS_PREFIX: `bench${workerCount}`,
      LOG_LEVEL: "info",
    };
    const api = start("api", port, env);
    const workers = Array.from({ length: workerCount }, () => start("worker", 0, env));
    try {
      await Promise.all([ready(api, /agent server listening/), ...workers.map((w) => ready(w, /worker ready/))]);
      const url = `http://127.0.0.1:${port}`;
      for (const { key, assistant_id, input } of GRAPHS) {
        const graph = { assistant_id, input };
        // node:http keep-alive client: the load process shares the machine's cores with the workers.
        load(url, "threadWait", { concurrency: 8, requests: 100, seconds: 30, graph });
        const runs = Array.from({ length: repeats }, () =>
          load(url, "threadWait", { concurrency: 32, requests, seconds: 30, graph }),
        );
        results[`${key}workers_${workerCount}`] = {
          per_second: median(runs.map((r) => r.per_second)),
          p50_ms: median(runs.map((r) => r.p50_ms)),
        };
      }
      if (workerCount === 1) results.fan_out = load(url, "fanOut", { joiners: 100 });
    } finally {
      for (const child of [api, ...workers]) child.kill("SIGTERM");
      await Promise.all(
        [api, ...workers].map(
          (child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve))),
        ),
      );
    }
  }
  for (const key of ["cpu_", ""]) {
    const one = results[`${key}workers_1`]?.per_second;
    const two = results[`${key}workers_2`]?.per_second;
    if (one && two) results[`${key}ratio`] = two / one;
  }
  return results;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) throw new Error("set DATABASE_URL and REDIS_URL");
  const { freePort } = await import("./common.mjs");
  const repeats = Number(process.env.BENCH_REPEATS ?? 3);
  const requests = Number(process.env.BENCH_REQUESTS ?? 1000);
  process.stdout.write(`${JSON.stringify(await scaleOut({ port: await freePort(), repeats, requests }), null, 2)}\n`);
}
