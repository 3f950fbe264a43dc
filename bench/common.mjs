// Helpers the benchmark scripts share.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
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

/** The pids of a process and all its descendants (the reference server runs in a child process), from /proc. */
export function processTree(pid) {
  const children = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {}
  }
  const tree = [];
  const stack = [pid];
  while (stack.length) {
    const current = stack.pop();
    tree.push(current);
    stack.push(...(children.get(current) ?? []));
  }
  return tree;
}

/** RSS in MB of a process and all its descendants. */
export function treeRss(pid) {
  let kb = 0;
  for (const current of processTree(pid)) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${current}/status`, "utf8"))?.[1] ?? 0);
    } catch {}
  }
  return kb / 1024;
}

/** CPU time (user + system, ms) of a process and all its descendants. */
export function treeCpuMs(pid) {
  let ms = 0;
  for (const current of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${current}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // After the command: state, ppid, ... utime is field 14 of stat, stime 15 (11 and 12 here); clock ticks of 10 ms.
      ms += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {}
  }
  return ms;
}

/** The environment without its `BERTH_*` variables: a server started with it runs on its defaults. */
export function withoutBerthVariables(env) {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("BERTH_")));
}

/**
 * Starts a server fresh on a free loopback port (`server.command(port, dataDir)` gives `[command, args, options]`; the
 * data directory is a new temp one, and the reference's `.langgraph_api` state is removed around it), awaits `/ok`, runs
 * `measure(url, pid)` and stops it. Resolves to `{label, ...measured}`, or `{label, error}` with the server's last stderr.
 */
export async function withFreshServer(name, server, measure) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), `berth-bench-${name}-`));
  const referenceState = join(benchDir, ".langgraph_api");
  if (name === "reference") rmSync(referenceState, { recursive: true, force: true });
  const [command, args, options] = server.command(port, dataDir);
  // A group of its own: the reference runs its server in a child process, which must go with it.
  const child = spawn(command, args, { ...options, detached: true, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  try {
    await waitForOk(url, child, 120);
    return { label: server.label, ...(await measure(url, child.pid)) };
  } catch (error) {
    return { label: server.label, error: `${error.message}\n${stderr.slice(-2000)}`.trim() };
  } finally {
    await stopGroup(child);
    rmSync(dataDir, { recursive: true, force: true });
    if (name === "reference") rmSync(referenceState, { recursive: true, force: true });
  }
}
