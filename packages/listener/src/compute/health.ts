import http from "node:http";
import { describeExit, type LaunchedProcess } from "./launched-process.js";
import { DeployError } from "./types.js";

const PROBE_TIMEOUT_MS = 2000;
const PROBE_INTERVAL_MS = 100;

/**
 * Resolves once the started server's `GET /ok` answers 200. Rejects with a
 * DeployError (the reason and its last log lines) when it exits first or is
 * not healthy within the timeout, or with the signal's reason when aborted;
 * the server is terminated by then.
 */
export async function untilServing(
  server: LaunchedProcess,
  options: { healthTimeoutMs: number; killGraceMs: number; signal?: AbortSignal },
): Promise<void> {
  const { signal } = options;
  const settled = new AbortController();
  try {
    await new Promise<void>((resolve, reject) => {
      const seconds = Math.round(options.healthTimeoutMs / 100) / 10;
      const timer = setTimeout(
        () => reject(new DeployError(`The agent server was not healthy within ${seconds} s${lastLines(server)}`)),
        options.healthTimeoutMs,
      );
      settled.signal.addEventListener("abort", () => clearTimeout(timer));
      void server.exited.then((exit) =>
        reject(
          new DeployError(`The agent server ${describeExit(exit)} before it was healthy${reasonOf(server)}${lastLines(server)}`),
        ),
      );
      if (signal?.aborted) reject(signal.reason);
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true, signal: settled.signal });
      void server.listening.then((url) => untilHealthy(url, settled.signal)).then(resolve, reject);
    });
  } catch (error) {
    settled.abort();
    await server.terminate(options.killGraceMs);
    throw error;
  }
  settled.abort();
}

/** The last stderr line, without the CLI's prefix: usually the one-line reason (a graph that fails to load). */
function reasonOf(server: LaunchedProcess): string {
  const line = server.tail.lastStderrLine();
  return line ? `: ${line.replace(/^berth serve: /, "")}` : "";
}

function lastLines(server: LaunchedProcess): string {
  const text = server.tail.text();
  // A lone stderr line is the reason already.
  return text && text !== server.tail.lastStderrLine() ? `\nLast log lines:\n${text}` : "";
}

/** Probes `GET /ok` until it answers 200; gives up quietly once `signal` aborts (the start was settled otherwise). */
async function untilHealthy(url: string, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    if (await probe(`${url}/ok`)) return;
    await new Promise<void>((resolve) => {
      // One listener at a time: a slow start probes many times on the same signal.
      const stop = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", stop);
        resolve();
      }, PROBE_INTERVAL_MS);
      signal.addEventListener("abort", stop, { once: true });
    });
  }
}

/** One health probe on its own connection (no pooled socket left to the server). */
function probe(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, timeout: PROBE_TIMEOUT_MS }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on("timeout", () => request.destroy(new Error("health probe timed out")));
    request.on("error", () => resolve(false));
  });
}
