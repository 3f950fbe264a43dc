import { createServer } from "node:net";
import type { BerthProcess } from "@berth/test-support";
import { type SseEvent, sseEvents } from "./sse.js";

/** The standard LangChain variables that turn tracing on, pointed at `endpoint` (a control plane's `/api/v1`). */
export function tracingEnv(endpoint: string, apiKey: string, project: string): Record<string, string> {
  return { LANGSMITH_TRACING: "true", LANGSMITH_ENDPOINT: endpoint, LANGSMITH_API_KEY: apiKey, LANGSMITH_PROJECT: project };
}

/** A port nothing listens on: bound, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** POSTs a run creation to a streaming endpoint and reads every SSE event until the stream ends. */
export async function streamRun(base: string, path: string, body: Record<string, unknown>): Promise<SseEvent[]> {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status !== 200 || !response.body) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  const events: SseEvent[] = [];
  for await (const event of sseEvents(response.body)) events.push(event);
  return events;
}

/**
 * Resolves once the process's output satisfies `done`. The helper only
 * exposes the output as text, and a log line reaches the pipe after the HTTP
 * answer that followed it, so this polls (every 20 ms, up to a deadline).
 */
export async function outputWhere(berth: BerthProcess, done: (output: string) => boolean, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const output = berth.output();
    if (done(output)) return output;
    if (Date.now() > deadline) throw new Error(`output never matched within ${timeoutMs} ms:\n${output.slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** How many lines of the process's output match. */
export function countLines(output: string, pattern: RegExp): number {
  return output.split("\n").filter((line) => pattern.test(line)).length;
}
