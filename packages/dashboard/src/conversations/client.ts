import { Client } from "@langchain/langgraph-sdk";

export interface DeploymentAccess {
  deploymentUrl: string;
  apiKey: string;
  tenantId?: string;
}

/**
 * The official SDK client for a deployment's agent server behind the router. Few retries: a page waits on
 * every call, and a wrong key or a stopped deployment should show as an error within seconds.
 */
export function deploymentClient({ deploymentUrl, apiKey, tenantId }: DeploymentAccess): Client {
  return new Client({
    apiUrl: deploymentUrl,
    apiKey,
    defaultHeaders: tenantId ? { "x-tenant-id": tenantId } : {},
    callerOptions: { maxRetries: 1 },
  });
}

/** An error as a reader sees it: the server's `detail` (the SDK's message is `HTTP <status>: <body>`). */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return typeof error === "string" ? error : JSON.stringify(error);
  const http = /^HTTP (\d+): (.*)$/s.exec(error.message);
  if (!http) return error.message;
  try {
    const detail: unknown = (JSON.parse(http[2]!) as { detail?: unknown }).detail;
    if (typeof detail === "string") return `${detail} (HTTP ${http[1]})`;
  } catch {
    // not a JSON body: the message as it is
  }
  return error.message;
}
