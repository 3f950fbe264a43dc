import { dirname } from "node:path";
import type { SpawnPlan } from "../process/spawn-plan.js";
import { configFileOf, type ServerSpec } from "./types.js";

/**
 * The listener's own variables a child may see (CA bundles: a graph calling
 * an API through an intercepting proxy needs them). Everything else in the
 * listener's environment (its API keys, DATABASE_URL, REDIS_URL, BERTH_*)
 * belongs to the listener, not to the deployments it runs.
 */
/** Variables naming CA bundles: an install through an intercepting proxy needs them, and their files. */
export const CA_VARIABLES = ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"];

const INHERITED = ["PATH", "HOME", "TMPDIR", ...CA_VARIABLES];
/** Levels at which the "agent server listening" line (info) is still printed. */
const VERBOSE_ENOUGH = new Set(["trace", "debug", "info"]);
/** A local process has no container around it: the heap gets this share of the memory limit, the rest is native memory and buffers. */
const HEAP_SHARE = 0.75;
const MIN_HEAP_MB = 64;

/**
 * The environment of an agent-server process: a minimal base (from `parent`:
 * the listener's environment, or a sandbox's), the deployment's variables,
 * then the platform's.
 */
export function serverEnv(spec: ServerSpec, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  env.NODE_ENV = parent.NODE_ENV ?? "production";
  Object.assign(env, spec.env);
  // Platform variables win over the deployment's: the supervisor depends on them.
  env.BERTH_SQLITE_SHARED = "1"; // the next revision starts on the same data dir before this one stops
  env.BERTH_DEPLOYMENT_ID = spec.deploymentId;
  env.BERTH_REVISION_ID = spec.revisionId;
  const workers = spec.resources?.workers;
  if (workers != null && workers >= 1) env.BERTH_WORKERS = String(Math.floor(workers));
  // The URL is read from an info line: a quieter LOG_LEVEL would hide it and the start would time out.
  if (!VERBOSE_ENOUGH.has(env.LOG_LEVEL ?? "info")) env.LOG_LEVEL = "info";
  return env;
}

/**
 * `node [--max-old-space-size=N] berth.mjs serve <config> --port 0 ...`.
 * `--port 0` and reading the URL from the log: no race for a free port (a
 * sandbox with a network of its own names the port its namespace forwards).
 * `resources.cpu` is not applied: a plain process has no portable CPU quota.
 */
export function serverArgs(berthBin: string, spec: ServerSpec, port = 0): string[] {
  const nodeFlags: string[] = [];
  const memory = spec.resources?.memoryLimitMb;
  if (memory != null && memory > 0)
    nodeFlags.push(`--max-old-space-size=${Math.max(MIN_HEAP_MB, Math.floor(memory * HEAP_SHARE))}`);
  return [
    ...nodeFlags,
    berthBin,
    "serve",
    configFileOf(spec),
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--data-dir",
    spec.dataDir,
  ];
}

/** The agent server of `spec` as a plain child process of the listener (no sandbox). */
export function plainServerPlan(spec: ServerSpec, berthBin: string): SpawnPlan {
  return {
    file: process.execPath,
    args: serverArgs(berthBin, spec),
    env: serverEnv(spec),
    cwd: dirname(configFileOf(spec)),
    sandboxed: false,
  };
}
