import { Worker } from "node:worker_threads";
import type { StaticAnalysis } from "./static-analysis.js";

type WorkerReply = { analysis: StaticAnalysis } | { error: string };

/** Runs the static analysis of one graph in a worker thread, which is ended after `timeoutMs`. */
export function analyzeInWorker(file: string, exportName: string, timeoutMs: number): Promise<StaticAnalysis> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./static-worker.mjs", import.meta.url), { workerData: { file, exportName } });
    // Neither the worker nor its deadline keeps a stopping server alive.
    worker.unref();
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    timer.unref();
    const settle = () => {
      clearTimeout(timer);
      void worker.terminate();
    };
    worker.once("message", (reply: WorkerReply) => {
      settle();
      if ("analysis" in reply) resolve(reply.analysis);
      else reject(new Error(reply.error));
    });
    worker.once("error", (error) => {
      settle();
      reject(error);
    });
    worker.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the analysis worker exited (${code}) without an answer`));
    });
  });
}
