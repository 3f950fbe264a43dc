import { Client } from "@langchain/langgraph-sdk";

export interface DeploymentAccess {
  deploymentUrl: string;
  apiKey: string;
  tenantId?: string;
}

/**
 * A fetch that calls `origin` only and follows no redirect: the key the SDK adds to every request goes to the
 * router it was opened on, never to a place an answer points at.
 */
function fetchOnly(origin: string): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input), document.baseURI);
    if (url.origin !== origin) return Promise.reject(new Error(`Refusing to send the key to ${url.origin}`));
    return fetch(input, { ...init, redirect: "error" });
  };
}

/**
 * The official SDK client for a deployment's agent server behind the router (`deploymentUrl`, one of the
 * platform's: api/platform.ts). Few retries: a page waits on every call, and a wrong key or a stopped
 * deployment should show as an error within seconds.
 */
export function deploymentClient({ deploymentUrl, apiKey, tenantId }: DeploymentAccess): Client {
  return new Client({
    apiUrl: deploymentUrl,
    apiKey,
    defaultHeaders: tenantId ? { "x-tenant-id": tenantId } : {},
    callerOptions: { maxRetries: 1, fetch: fetchOnly(new URL(deploymentUrl).origin) },
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
