import { gzipSync } from "node:zlib";
import { Client } from "langsmith";
import type { Api, Response } from "@berth/test-support";

// Shapes the tracing read API answers (docs/tracing.md).

export interface TracedRun {
  id: string;
  trace_id: string;
  parent_run_id: string | null;
  dotted_order: string | null;
  project_id: string;
  session_id: string;
  name: string | null;
  run_type: string | null;
  status: "pending" | "success" | "error";
  start_time: string | null;
  end_time: string | null;
  inputs: Record<string, unknown> | null;
  outputs: Record<string, unknown> | null;
  error: string | null;
  extra: { metadata?: Record<string, unknown> } & Record<string, unknown>;
  tags: string[] | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  thread_id: string | null;
}

export interface RunTree extends TracedRun {
  child_runs: RunTree[];
}

export interface Feedback {
  id: string;
  run_id: string;
  trace_id: string | null;
  key: string;
  score: number | null;
  value: unknown;
  comment: string | null;
  correction: unknown;
  metadata: Record<string, unknown> | null;
  source: string;
  created_at: string;
}

export interface Usage {
  project_id: string;
  thread_id: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  runs: number;
  traces: number;
}

export interface TracingProject {
  id: string;
  tenant_id: string;
  name: string;
  deployment_id: string | null;
}

/** The real langsmith client pointed at the control plane (LANGSMITH_ENDPOINT=<cp>/api/v1). */
export function tracingClient(
  baseUrl: string,
  apiKey: string,
  options: { autoBatchTracing?: boolean; workspaceId?: string; prefix?: string } = {},
): Client {
  return new Client({
    apiUrl: `${baseUrl}${options.prefix ?? ""}/api/v1`,
    apiKey,
    autoBatchTracing: options.autoBatchTracing ?? true,
    workspaceId: options.workspaceId,
  });
}

/** Fails loudly unless the answer has the expected status. */
export function expectStatus<T>(response: Response<T>, status: number): T {
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body;
}

export async function runTree(client: Api, runId: string): Promise<RunTree> {
  return expectStatus(await client.get<RunTree>(`/api/v1/runs/${runId}/tree`), 200);
}

export async function listRuns(client: Api, project: string, query = ""): Promise<TracedRun[]> {
  return expectStatus(
    await client.get<{ resources: TracedRun[] }>(`/api/v1/projects/${encodeURIComponent(project)}/runs${query}`),
    200,
  ).resources;
}

export async function threadUsage(client: Api, project: string, threadId: string): Promise<Usage> {
  return expectStatus(
    await client.get<Usage>(`/api/v1/projects/${encodeURIComponent(project)}/threads/${encodeURIComponent(threadId)}/usage`),
    200,
  );
}

export async function runFeedback(client: Api, runId: string): Promise<Feedback[]> {
  return expectStatus(await client.get<{ resources: Feedback[] }>(`/api/v1/runs/${runId}/feedback`), 200).resources;
}

/** Every run of a tree, depth first. */
export function flatten(tree: RunTree): RunTree[] {
  return [tree, ...tree.child_runs.flatMap(flatten)];
}

/** A multipart body as the langsmith client writes it (CRLF, one JSON part per name). */
export function multipartBody(
  parts: { name: string; value: unknown; contentType?: string }[],
  boundary = "----BerthTestBoundary",
): Buffer {
  const chunks = parts.map(({ name, value, contentType }) => {
    const data = typeof value === "string" ? value : JSON.stringify(value);
    return `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: ${contentType ?? `application/json; length=${Buffer.byteLength(data)}`}\r\n\r\n${data}\r\n`;
  });
  return Buffer.from(`${chunks.join("")}--${boundary}--\r\n`);
}

/** POST /api/v1/runs/multipart with a raw body (optionally gzipped). */
export async function postMultipart(
  baseUrl: string,
  apiKey: string,
  body: Buffer,
  options: { gzip?: boolean; boundary?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = {
    "x-api-key": apiKey,
    "content-type": `multipart/form-data; boundary=${options.boundary ?? "----BerthTestBoundary"}`,
    ...(options.gzip ? { "content-encoding": "gzip" } : {}),
    ...options.headers,
  };
  const response = await fetch(`${baseUrl}/api/v1/runs/multipart`, {
    method: "POST",
    headers,
    body: new Uint8Array(options.gzip ? gzipSync(body) : body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as unknown) : null };
}
