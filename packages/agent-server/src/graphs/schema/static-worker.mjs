// Worker thread: reads a graph's schemas from its TypeScript types. Building a
// TypeScript program takes seconds of CPU, which would stall every request
// served from the main thread meanwhile.
import { parentPort, workerData } from "node:worker_threads";
import { tsImport } from "tsx/esm/api";

try {
  const { analyzeGraphTypes } = await tsImport("./static-analysis.ts", import.meta.url);
  parentPort.postMessage({ analysis: analyzeGraphTypes(workerData.file, workerData.exportName) });
} catch (error) {
  parentPort.postMessage({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
}
