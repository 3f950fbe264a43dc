// Worker thread: reads a graph's schemas from its TypeScript types. Building a
// TypeScript program takes seconds of CPU, which would stall every request
// served from the main thread meanwhile.
import { existsSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";

/** Compiled next to this file (dist/), or the TypeScript source when Berth runs from its sources. */
async function loadAnalysis() {
  const compiled = new URL("./static-analysis.js", import.meta.url);
  if (existsSync(compiled)) return import(compiled.href);
  const { tsImport } = await import("tsx/esm/api");
  return tsImport("./static-analysis.ts", import.meta.url);
}

try {
  const { analyzeGraphTypes } = await loadAnalysis();
  parentPort.postMessage({ analysis: analyzeGraphTypes(workerData.file, workerData.exportName) });
} catch (error) {
  parentPort.postMessage({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
}
