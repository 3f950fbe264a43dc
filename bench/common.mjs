// Helpers the benchmark scripts share.
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const benchDir = dirname(fileURLToPath(import.meta.url));
export const root = join(benchDir, "..");

/** Installs `dir`'s dependencies when its lockfile is newer than its install (the workspace, or bench/ and its reference server). */
export function ensureInstalled(dir) {
  const installed = join(dir, "node_modules", ".package-lock.json");
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(join(dir, "package-lock.json")).mtimeMs) return;
  console.error(`bench: installing ${dir === root ? "the workspace" : "bench/"} dependencies ...`);
  // bench/ uses `npm install`: its lockfile pins the reference server, but npm ci rejects it for the
  // optional platform packages a dependency of the reference lists for other systems.
  const args = dir === root ? ["ci"] : ["install", "--no-save"];
  const result = spawnSync("npm", [...args, "--no-audit", "--no-fund"], { cwd: dir, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The median of the numbers among `values`; null when there are none. */
export function median(values) {
  const sorted = values.filter((v) => typeof v === "number").sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : null;
}
