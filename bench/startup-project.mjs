// Start to first `/ok` and footprint of `berth dev` on a real project: `node bench/startup-project.mjs [project...]`
// (default: bench/projects/five-graphs, five `.mts` graphs importing LangChain). Each project is started BENCH_REPEATS (3)
// times in a fresh data directory (BENCH_RELOAD=1: with the reloading supervisor, else `--no-reload`); `/ok` is polled every
// 10 ms; then one request lists the assistants and one runs the first graph (`/runs/wait`), and the RSS of the process tree
// is read 3 s after that. The CPU time the process tree used until the first `/ok` is shown too: steadier than wall time on
// a shared machine. tsx keeps its transpile cache on disk (docs/agent-server.md); BENCH_COLD=1 starts without it
// (TSX_DISABLE_CACHE=1).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { benchDir, freePort, median, root, stopGroup, treeCpuMs } from "./common.mjs";

const repeats = Number(process.env.BENCH_REPEATS ?? 3);
const reload = process.env.BENCH_RELOAD === "1";
const cold = process.env.BENCH_COLD === "1";
// BENCH_SERVE=1: `berth serve`, which imports the graphs before it listens (as `berth dev` did before it deferred them).
const serve = process.env.BENCH_SERVE === "1";
const projects = process.argv.slice(2).length ? process.argv.slice(2) : [join(benchDir, "projects", "five-graphs")];

/** Resident memory in MB, from /proc: of the process tree, and of its deepest process (the agent server under a supervisor). */
function rssMb(pid) {
  let pages = 0;
  let deepest = { depth: -1, pages: 0 };
  const visit = (id, depth) => {
    try {
      const own = Number(readFileSync(`/proc/${id}/statm`, "utf8").split(" ")[1]);
      pages += own;
      if (depth > deepest.depth) deepest = { depth, pages: own };
      for (const task of readFileSync(`/proc/${id}/task/${id}/children`, "utf8").trim().split(/\s+/).filter(Boolean))
        visit(task, depth + 1);
    } catch {}
  };
  visit(pid, 0);
  const mb = (count) => (count * 4096) / (1024 * 1024);
  return { tree: mb(pages), server: mb(deepest.pages) };
}

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function once(project, first) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "berth-bench-start-"));
  const started = performance.now();
  const args = [serve ? "serve" : "dev", project, "--port", String(port), "--data-dir", dataDir];
  if (!reload && !serve) args.push("--no-reload");
  const child = spawn(process.execPath, [join(root, "packages", "cli", "bin", "berth.mjs"), ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
    // NODE_OPTIONS passes through: e.g. `--max-semi-space-size=16` measures berth dev's server without its young-generation cap.
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LOG_LEVEL: "warn",
      ...(process.env.NODE_OPTIONS ? { NODE_OPTIONS: process.env.NODE_OPTIONS } : {}),
      ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
      ...(cold ? { TSX_DISABLE_CACHE: "1" } : {}),
    },
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`berth dev ${project} exited with ${child.exitCode}:\n${stderr}`);
    try {
      if ((await fetch(`${base}/ok`)).ok) break;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = treeCpuMs(child.pid) / 1000; // moves less than wall time with other work on the shared machine
  const assistants = await post(`${base}/assistants/search`, { limit: 100 });
  const run = performance.now();
  await post(`${base}/runs/wait`, { assistant_id: first, input: { messages: [{ role: "user", content: "hello" }] } });
  const firstRunMs = performance.now() - run;
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const rss = rssMb(child.pid);
  await stopGroup(child);
  rmSync(dataDir, { recursive: true, force: true });
  return { seconds, cpu, firstRunMs, rss: rss.tree, serverRss: rss.server, assistants: assistants.length };
}

console.log(
  `\`${serve ? "berth serve" : `berth dev${reload ? "" : " --no-reload"}`}\`${cold ? ", without tsx's transpile cache" : ""}, median of ${repeats} starts\n\n| project | assistants | start to first \`/ok\` s | CPU to first \`/ok\` s | first run ms | RSS 3 s after first request: server, tree, MB |\n|---|---:|---:|---:|---:|---:|`,
);
const results = [];
for (const project of projects) {
  const first = Object.keys(JSON.parse(readFileSync(join(project, "langgraph.json"), "utf8")).graphs)[0];
  const runs = [];
  for (let i = 0; i < repeats; i++) runs.push(await once(project, first));
  const seconds = median(runs.map((r) => r.seconds));
  const cpu = median(runs.map((r) => r.cpu));
  const firstRunMs = median(runs.map((r) => r.firstRunMs));
  const rss = median(runs.map((r) => r.rss));
  const serverRss = median(runs.map((r) => r.serverRss));
  console.log(
    `| ${relative(root, project)} | ${runs[0].assistants} | ${seconds.toFixed(2)} | ${cpu.toFixed(2)} | ${firstRunMs.toFixed(0)} | ${serverRss.toFixed(0)}, ${rss.toFixed(0)} |`,
  );
  results.push({ project: relative(root, project), seconds, cpu, firstRunMs, serverRss, rss, runs });
  console.error(
    `  runs: ${runs.map((r) => `${r.seconds.toFixed(2)} s (CPU ${r.cpu.toFixed(2)} s) ${r.serverRss.toFixed(0)}/${r.rss.toFixed(0)} MB`).join(", ")}`,
  );
}
const load = loadavg()
  .map((value) => value.toFixed(1))
  .join(", ");
console.log(`\nLoad average at the end (1, 5, 15 min): ${load}`);
mkdirSync(join(benchDir, "results"), { recursive: true });
const file = join(benchDir, "results", `startup-project-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
writeFileSync(file, JSON.stringify({ serve, reload, cold, repeats, loadavg: loadavg(), results }, null, 2));
