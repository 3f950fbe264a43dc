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

/** Resolves once `url/ok` answers; rejects when the server exits first or after `seconds`. */
export async function waitForOk(url, child, seconds) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/ok`)).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`server did not answer /ok within ${seconds}s`);
}

/** Stops a server started in its own process group (detached): SIGTERM, SIGKILL after 10 s; resolves once it exited. */
export async function stopGroup(child) {
  const exited = new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)));
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {}
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  }, 10_000);
  await exited;
  clearTimeout(timer);
}

/** `berth dev` of the bench graphs on `port` with its database in `dataDir`: the arguments after `node`. */
export function berthDevArgs(port, dataDir) {
  return [
    join(root, "packages", "cli", "bin", "berth.mjs"),
    "dev",
    "--no-reload",
    join(benchDir, "graphs"),
    "--port",
    String(port),
    "--data-dir",
    dataDir,
  ];
}

/** The named events of an SSE response body (`{name, frame}`), as each frame arrives. */
export async function* sseEvents(body) {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const name = /^event: (.*)$/m.exec(frame)?.[1];
      if (name) yield { name, frame };
    }
  }
}
