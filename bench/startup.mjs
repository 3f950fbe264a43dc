// Start to first `/ok` and idle RSS of `berth dev` on a project: `node bench/startup.mjs [project...]`
// (default: examples/echo-chat, TypeScript, and bench/graphs, JavaScript). Each project is started BENCH_REPEATS (3) times
// in a fresh data directory; `/ok` is polled every 10 ms; the RSS of the process tree is read 5 s after the first `/ok`
// (just started) and 30 s after it (idle: V8's memory reducer has released what loading left behind, as it does ~15 s into
// an idle process).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { benchDir, freePort, median, root, stopGroup } from "./common.mjs";

const repeats = Number(process.env.BENCH_REPEATS ?? 3);
const projects = process.argv.slice(2).length
  ? process.argv.slice(2)
  : [join(root, "examples", "echo-chat"), join(benchDir, "graphs")];

/** Resident memory of a process and its descendants, in MB, from /proc. */
function treeRssMb(pid) {
  let pages = 0;
  const visit = (id) => {
    try {
      pages += Number(readFileSync(`/proc/${id}/statm`, "utf8").split(" ")[1]);
      for (const task of readFileSync(`/proc/${id}/task/${id}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) visit(task);
    } catch {}
  };
  visit(pid);
  return (pages * 4096) / (1024 * 1024);
}

async function once(project) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "berth-bench-start-"));
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      join(root, "packages", "cli", "bin", "berth.mjs"),
      "dev",
      project,
      "--no-reload",
      "--port",
      String(port),
      "--data-dir",
      dataDir,
    ],
    { stdio: "ignore", detached: true, env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: "warn" } },
  );
  for (;;) {
    if (child.exitCode !== null) throw new Error(`berth dev ${project} exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/ok`)).ok) break;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const seconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const started5s = treeRssMb(child.pid);
  await new Promise((resolve) => setTimeout(resolve, 25000));
  const idle = treeRssMb(child.pid);
  await stopGroup(child);
  rmSync(dataDir, { recursive: true, force: true });
  return { seconds, started5s, idle };
}

console.log(
  `\`berth dev --no-reload\`, median of ${repeats} starts\n\n| project | start to first \`/ok\` s | RSS 5 s after, MB | idle RSS (30 s after), MB |\n|---|---:|---:|---:|`,
);
for (const project of projects) {
  const runs = [];
  for (let i = 0; i < repeats; i++) runs.push(await once(project));
  const seconds = median(runs.map((run) => run.seconds));
  const started5s = median(runs.map((run) => run.started5s));
  const idle = median(runs.map((run) => run.idle));
  console.log(`| ${relative(root, project)} | ${seconds.toFixed(2)} | ${started5s.toFixed(0)} | ${idle.toFixed(0)} |`);
}
