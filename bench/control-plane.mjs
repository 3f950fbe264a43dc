// A control plane for the deploy benchmarks: `berth control-plane` with its embedded listener on a fresh data directory
// (SQLite), an admin key, and helpers to call its API and wait for a revision.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const key = "berth_bench_admin_key";
// BENCH_CP_CPU_PROF=<dir>: the control plane runs with --cpu-prof, its profiles written to <dir> when it stops.
const profileFlags = process.env.BENCH_CP_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CP_CPU_PROF}`] : [];

export async function startBenchControlPlane(env = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-bench-cp-"));
  const cp = spawn(
    process.execPath,
    [...profileFlags, join(root, "packages/cli/bin/berth.mjs"), "control-plane", "--port", "0", "--data-dir", dataDir],
    {
      env: { ...process.env, BERTH_ADMIN_API_KEY: key, BERTH_ROUTER_PORT: "0", LOG_LEVEL: "info", DATABASE_URL: "", ...env },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const url = await new Promise((resolve, reject) => {
    let text = "";
    cp.stdout.on("data", (chunk) => {
      text += chunk;
      const match = /"url":"([^"]+)"[^\n]*"msg":"control plane listening"/.exec(text);
      if (!match) return;
      resolve(match[1]);
      // Read on, unkept: a long run's log must neither block the pipe nor pile up here.
      cp.stdout.removeAllListeners("data");
      cp.stdout.resume();
    });
    cp.once("exit", (code) => reject(new Error(`control plane exited ${code}`)));
  });

  async function call(method, path, body) {
    const response = await fetch(url + path, {
      method,
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }

  /** Long-polls the revision until it is DEPLOYED; throws on any failure status. */
  async function untilDeployed(deploymentId, revisionId) {
    for (;;) {
      const revision = await call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}?wait_seconds=120`);
      if (revision.status === "DEPLOYED") return revision;
      if (/FAILED|SKIPPED|INTERRUPTED/.test(revision.status)) throw new Error(`${revision.status}: ${revision.status_message}`);
    }
  }

  return { url, pid: cp.pid, call, untilDeployed, stop: () => cp.kill("SIGTERM") };
}
