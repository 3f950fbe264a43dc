#!/usr/bin/env node
// `node bench/profile-summary.mjs <file.cpuprofile> [top]`: what a V8 CPU profile (node --cpu-prof) spent its time on.
// Prints the top functions by self time and by inclusive time (a function counted once per sample however deep it
// recurses), and the same by area (the package or part of Berth a function's file belongs to), as shares of the
// profile's busy time (samples outside `(idle)`).
import { readFileSync } from "node:fs";

const [, , file, topArg] = process.argv;
const top = Number(topArg ?? 15);
const profile = JSON.parse(readFileSync(file, "utf8"));

/** The area of a function: by its file, or the pseudo-frames V8 names. */
const AREAS = [
  [/^\(garbage collector\)$/, "GC"],
  [/^\((program|idle|root)\)$/, null],
  [/node_modules\/langsmith\//, "langsmith"],
  [/@langchain\/core\/dist\/callbacks\//, "@langchain/core callbacks"],
  [/@langchain\/core\/dist\/tracers\//, "@langchain/core tracers"],
  [/@langchain\/core\/dist\/runnables\//, "@langchain/core runnables"],
  [/@langchain\/core\/dist\/(messages|language_models|outputs)/, "@langchain/core messages/models"],
  [/@langchain\/core\//, "@langchain/core other"],
  [/@langchain\/langgraph-checkpoint/, "langgraph-checkpoint"],
  [/@langchain\/langgraph\//, "@langchain/langgraph"],
  [/node_modules\/uuid\//, "uuid"],
  [/node_modules\/better-sqlite3\//, "better-sqlite3 (JS + native)"],
  [/node_modules\/(pg|pg-protocol|pg-pool)\//, "pg"],
  [/node_modules\/(ioredis|redis)/, "redis client"],
  [/node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify)/, "fastify"],
  [/node_modules\/(pino|sonic-boom|thread-stream)/, "pino"],
  [/node_modules\/zod\//, "zod"],
  [/node_modules\/(ajv|fast-json-stringify|fast-uri)/, "ajv / fast-json-stringify"],
  [/packages\/agent-server\/dist\/storage\//, "Berth storage"],
  [/packages\/agent-server\/dist\/runs\//, "Berth runs"],
  [/packages\/agent-server\/dist\/http\//, "Berth http"],
  [/packages\/agent-server\//, "Berth other"],
  [/packages\//, "Berth other packages"],
  [/node_modules\/([^/]+)/, null],
  [/^node:|^internal\//, "node internals"],
  [/^$/, "native / V8 builtins"],
];

function areaOf(frame) {
  const key = frame.url || frame.functionName;
  for (const [pattern, area] of AREAS) {
    if (!pattern.test(frame.url ? frame.url : frame.functionName.startsWith("(") ? frame.functionName : "")) continue;
    if (area !== null) return area;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(key)?.[1];
    return pkg ?? (frame.functionName.startsWith("(") ? frame.functionName : "other");
  }
  return "other";
}

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const label = (frame) =>
  `${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/packages\//, "packages/")}:${frame.lineNumber + 1}`;

const selfByFn = new Map();
const totalByFn = new Map();
const selfByArea = new Map();
const totalByArea = new Map();
let busy = 0;
let all = 0;
const add = (map, key, value) => map.set(key, (map.get(key) ?? 0) + value);
profile.samples.forEach((id, i) => {
  const dt = (profile.timeDeltas[i] ?? 0) / 1000;
  all += dt;
  const leaf = nodes.get(id).callFrame;
  if (leaf.functionName === "(idle)") return;
  busy += dt;
  add(selfByFn, label(leaf), dt);
  add(selfByArea, areaOf(leaf), dt);
  const fns = new Set();
  const areas = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const frame = nodes.get(at).callFrame;
    if (frame.functionName === "(root)") continue;
    fns.add(label(frame));
    areas.add(areaOf(frame));
  }
  for (const fn of fns) add(totalByFn, fn, dt);
  for (const area of areas) add(totalByArea, area, dt);
});

const table = (title, map, n) => {
  const rows = [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log(`\n${title}\n\n| | ms | share of busy |\n|---|---:|---:|`);
  for (const [key, ms] of rows) console.log(`| \`${key}\` | ${ms.toFixed(0)} | ${((100 * ms) / busy).toFixed(1)} % |`);
};
console.log(`${file}: ${all.toFixed(0)} ms profiled, ${busy.toFixed(0)} ms busy (${((100 * busy) / all).toFixed(0)} %)`);
table("By area, self time", selfByArea, top);
table("By area, inclusive (subtree) time", totalByArea, top);
table("Functions by self time", selfByFn, top);
table("Functions by inclusive time", totalByFn, top);
