#!/usr/bin/env node
// `node bench/auth.mjs`: what authentication and authorization cost per request. Each configuration is a server started
// fresh (Berth: `berth dev` on SQLite in a temp directory; the reference: `langgraphjs dev` of @langchain/langgraph-api
// 1.5.1, in memory) on bench/projects/auth (the one-node `trivial` graph of bench/graphs):
//   1. none: no authentication (the baseline);
//   2. header: an `authenticate` handler (auth.path) returning the `x-bench-user` header as the identity;
//   3. owner: the same plus a `*` resource handler stamping `metadata.owner` and returning an `{owner}` filter;
//   4. jwt-secret: Berth's built-in JWT scheme, BERTH_AUTH_JWT_SECRET (HS256 tokens signed here with jose);
//   5. jwt-jwks: the built-in JWT scheme, BERTH_AUTH_JWT_JWKS_URL at a loopback server of this script (ES256 key made here).
// Scenarios, as one user, after a warm-up: `GET /threads/{id}` of one of its threads (autocannon, 16 connections, 5 s) →
// requests/s and p50 / p99 latency; `POST /threads/search {limit: 10}` over its 200 threads (plus 200 of another user in
// `owner`, so the filter has something to leave out) → requests/s. Each figure is the median of BENCH_REPEATS (3) runs,
// each of a separate load process; a configuration's ratio is its requests/s over the same server's baseline. The reference
// runs 1-3 (it has no built-in JWT scheme). BENCH_QUICK=1: 2 s runs. Prints a markdown table, a JSON line, and writes
// bench/results/auth-<time>.json. Not a test: the figures depend on the machine.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { benchDir, ensureInstalled, freePort, median, root, stopGroup } from "./common.mjs";

const berthBin = join(root, "packages", "cli", "bin", "berth.mjs");
const project = join(benchDir, "projects", "auth");
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const QUICK = process.env.BENCH_QUICK === "1";
const CONNECTIONS = 16;
const SECONDS = QUICK ? 2 : 5;
const THREADS = 200;
const USER = "alice";
const OTHER = "bob";

const log = (text) => process.stderr.write(`bench: ${text}\n`);

// Load mode: `node auth.mjs --load <json>` runs one autocannon measurement and prints one JSON line. A process of its
// own, as run.mjs's load.mjs, so the load generator does not share an event loop with this script's JWKS server.
if (process.argv[2] === "--load") {
  const { default: autocannon } = await import("autocannon");
  const { url, method, headers, body, seconds } = JSON.parse(process.argv[3]);
  const result = await autocannon({ url, method, headers, body, connections: CONNECTIONS, duration: seconds });
  const out = {
    per_second: result.requests.average,
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    failures: result.errors + result.non2xx + result.timeouts,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(0);
}

ensureInstalled(root);
ensureInstalled(benchDir);
// jose from the workspace root (Berth's own dependency): bench/ does not declare it.
const jose = await import(pathToFileURL(createRequire(join(root, "package.json")).resolve("jose")).href);

/** A JWKS endpoint on loopback serving one ES256 public key; `sign` makes a token for a user with its private key. */
async function startJwks() {
  const { publicKey, privateKey } = await jose.generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await jose.exportJWK(publicKey)), kid: "bench", alg: "ES256", use: "sig" };
  let fetches = 0;
  const server = createHttpServer((_request, response) => {
    fetches++;
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/.well-known/jwks.json`,
    fetches: () => fetches,
    sign: (sub) =>
      new jose.SignJWT({})
        .setProtectedHeader({ alg: "ES256", kid: "bench" })
        .setSubject(sub)
        .setExpirationTime("2h")
        .sign(privateKey),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

const SECRET = "berth-bench-shared-secret-0123456789abcdef";
const hsKey = new TextEncoder().encode(SECRET);
const signHs = (sub) =>
  new jose.SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject(sub).setExpirationTime("2h").sign(hsKey);
const jwks = await startJwks();

const userHeader = async (user) => ({ "x-bench-user": user });
const CONFIGS = [
  { name: "none", label: "1. no auth (baseline)", config: "langgraph.json", headers: async () => ({}) },
  { name: "header", label: "2. authenticate handler", config: "langgraph.header.json", headers: userHeader },
  { name: "owner", label: "3. handler + `*` owner filter", config: "langgraph.owner.json", headers: userHeader, other: true },
  {
    name: "jwt_secret",
    label: "4. built-in JWT, shared secret (HS256)",
    config: "langgraph.json",
    env: { BERTH_AUTH_JWT_SECRET: SECRET },
    headers: async (user) => ({ authorization: `Bearer ${await signHs(user)}` }),
    berthOnly: true,
  },
  {
    name: "jwt_jwks",
    label: "5. built-in JWT, JWKS (ES256)",
    config: "langgraph.json",
    env: { BERTH_AUTH_JWT_JWKS_URL: jwks.url },
    headers: async (user) => ({ authorization: `Bearer ${await jwks.sign(user)}` }),
    berthOnly: true,
  },
];

// Nothing of the caller's environment may turn authentication on (or off) behind a configuration's back.
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !key.startsWith("BERTH_AUTH_") && key !== "BERTH_API_KEY"),
);

const SERVERS = {
  berth: {
    label: "Berth embedded (SQLite)",
    command: (port, config, env, dataDir) => [
      process.execPath,
      [berthBin, "dev", "--no-reload", join(project, config), "--port", String(port), "--data-dir", dataDir],
      { cwd: root, env: { ...cleanEnv, DATABASE_URL: "", REDIS_URL: "", LOG_LEVEL: "warn", ...env } },
    ],
  },
  reference: {
    label: "reference (@langchain/langgraph-api 1.5.1, langgraphjs dev)",
    command: (port, config) => [
      join(benchDir, "node_modules", ".bin", "langgraphjs"),
      ["dev", "--no-browser", "--no-reload", "-p", String(port), "-c", join(project, config)],
      { cwd: benchDir, env: { ...cleanEnv, LOG_LEVEL: "warn" } },
    ],
  },
};

async function waitForOk(url, child, headers, seconds) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      // The reference authenticates /ok too, hence the user's credential.
      if ((await fetch(`${url}/ok`, { headers })).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`server did not answer /ok within ${seconds}s`);
}

async function call(url, method, path, headers, body) {
  const response = await fetch(url + path, {
    method,
    headers: { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Creates `count` threads as a user, 8 at a time; returns their ids. */
async function seed(url, headers, count) {
  const ids = [];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (ids.length < count) {
        const index = ids.length;
        ids.push(null);
        ids[index] = (await call(url, "POST", "/threads", headers, { metadata: { bench: true } })).thread_id;
      }
    }),
  );
  return ids;
}

function loadProcess(request) {
  const result = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--load", JSON.stringify(request)], {
    cwd: benchDir,
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`load process failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split("\n").at(-1));
}

/** Repeats a measurement and keeps the median of each numeric field. */
function repeated(request) {
  const runs = Array.from({ length: REPEATS }, () => loadProcess(request));
  return Object.fromEntries(Object.keys(runs[0]).map((key) => [key, median(runs.map((r) => r[key]))]));
}

async function measure(serverName, config) {
  const server = SERVERS[serverName];
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), "berth-bench-auth-"));
  // The reference keeps its in-memory state in .langgraph_api beside langgraph.json: every start must be fresh.
  const referenceState = join(project, ".langgraph_api");
  rmSync(referenceState, { recursive: true, force: true });
  const [command, args, options] = server.command(port, config.config, config.env ?? {}, dataDir);
  // A group of its own: the reference runs its server in a child process, which must go with it.
  const child = spawn(command, args, { ...options, detached: true, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  try {
    // Tokens are made once, before the load: signing is the client's cost, not the server's.
    const headers = await config.headers(USER);
    const started = performance.now();
    await waitForOk(url, child, headers, 120);
    const startup_s = (performance.now() - started) / 1000;
    const ids = await seed(url, headers, THREADS);
    if (config.other) await seed(url, await config.headers(OTHER), THREADS);
    // The scoping must hold, or search would measure something else: the user sees its own threads only.
    const seen = await call(url, "POST", "/threads/search", headers, { limit: 1000 });
    const visible = seen.length;
    if (config.other && visible !== THREADS) throw new Error(`search saw ${visible} threads, expected the user's ${THREADS}`);
    const get = { url: `${url}/threads/${ids[0]}`, method: "GET", headers, seconds: SECONDS };
    const search = {
      url: `${url}/threads/search`,
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ limit: 10 }),
      seconds: SECONDS,
    };
    // Warm-up: both routes JIT-compiled (and the JWKS fetched) before measuring.
    loadProcess({ ...get, seconds: 1 });
    loadProcess({ ...search, seconds: 1 });
    log(`${serverName} ${config.name}: GET /threads/{id}`);
    const getResult = repeated(get);
    log(`${serverName} ${config.name}: POST /threads/search`);
    const searchResult = repeated(search);
    return { startup_s, visible_threads: visible, get: getResult, search: searchResult };
  } catch (error) {
    return { error: `${error.message}\n${stderr.slice(-2000)}`.trim() };
  } finally {
    await stopGroup(child);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(referenceState, { recursive: true, force: true });
  }
}

const results = {
  date: new Date().toISOString(),
  quick: QUICK,
  repeats: REPEATS,
  plan: { connections: CONNECTIONS, seconds: SECONDS, threads: THREADS },
  servers: { berth: {}, reference: {} },
};
for (const config of CONFIGS) {
  for (const serverName of ["berth", "reference"]) {
    if (serverName === "reference" && config.berthOnly) {
      results.servers.reference[config.name] = { unsupported: "no built-in JWT scheme (a project's auth.path only)" };
      continue;
    }
    log(`starting ${serverName} ${config.label}`);
    results.servers[serverName][config.name] = await measure(serverName, config);
  }
}
results.jwks_fetches = jwks.fetches();
await jwks.close();

// Ratios to the same server's baseline.
for (const byConfig of Object.values(results.servers)) {
  const base = byConfig.none;
  for (const result of Object.values(byConfig)) {
    if (!result.get || !base?.get) continue;
    result.get.ratio = Number((result.get.per_second / base.get.per_second).toFixed(3));
    result.search.ratio = Number((result.search.per_second / base.search.per_second).toFixed(3));
  }
}

const failed = (m) => (m.failures ? ` (${m.failures} failed)` : "");
const rate = (m) => `${Math.round(m.per_second)} (×${m.ratio?.toFixed(2) ?? "?"})${failed(m)}`;
const cells = (r) =>
  r.unsupported
    ? ["n/a", "n/a", "n/a"]
    : r.error
      ? ["error", "error", "error"]
      : [rate(r.get), `${r.get.p50_ms} / ${r.get.p99_ms} ms`, rate(r.search)];
const getHead = `GET /threads/{id} req/s (× baseline)`;
const searchHead = `search limit 10 req/s (× baseline)`;
console.log(
  `| ${QUICK ? "auth (BENCH_QUICK)" : "auth"} | Berth ${getHead} | Berth p50 / p99 | Berth ${searchHead} | ` +
    `reference ${getHead} | reference p50 / p99 | reference ${searchHead} |`,
);
console.log("|---|---|---|---|---|---|---|");
for (const config of CONFIGS) {
  const row = [...cells(results.servers.berth[config.name]), ...cells(results.servers.reference[config.name])];
  console.log(`| ${config.label} | ${row.join(" | ")} |`);
}
console.log(
  `\n${CONNECTIONS} connections, ${SECONDS} s per run, median of ${REPEATS}; one user's ${THREADS} threads ` +
    `(+${THREADS} of another user in 3). Reference: n/a for 4-5, it has no built-in JWT scheme.`,
);
for (const [serverName, byConfig] of Object.entries(results.servers)) {
  for (const [name, result] of Object.entries(byConfig)) {
    if (result.error) console.log(`\n${SERVERS[serverName].label}, ${name}: error: ${result.error}`);
  }
}
mkdirSync(join(benchDir, "results"), { recursive: true });
const file = join(benchDir, "results", `auth-${results.date.replace(/[:.]/g, "-")}.json`);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nJSON ${JSON.stringify(results)}`);
console.log(file);
