import type { Credentials } from "../auth/session";

/** An answer other than 2xx, with the control plane's `detail` when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function detailOf(body: unknown, status: number): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((item: { loc?: unknown[]; msg?: string }) => `${(item.loc ?? []).join(".")}: ${item.msg ?? ""}`).join("; ");
  }
  return `The control plane answered ${status}`;
}

/**
 * The control plane's API, from the page it served: paths are relative to the
 * page, so the dashboard works at `/` and under the `/api-host/` prefix alike.
 */
export class ApiClient {
  constructor(
    private readonly credentials: Credentials,
    /** Called on a 401: the key is wrong or revoked, and the page asks for another. */
    private readonly onUnauthorized: () => void,
  ) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { "X-Api-Key": this.credentials.apiKey };
    if (this.credentials.tenantId) headers["X-Tenant-Id"] = this.credentials.tenantId;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(new URL(path, document.baseURI), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed: unknown = text ? safeJson(text) : null;
    if (response.status === 401) this.onUnauthorized();
    if (!response.ok) throw new ApiError(response.status, detailOf(parsed, response.status));
    return parsed as T;
  }

  get = <T>(path: string) => this.request<T>("GET", path);
  post = <T>(path: string, body: unknown = {}) => this.request<T>("POST", path, body);
  patch = <T>(path: string, body: unknown) => this.request<T>("PATCH", path, body);
  delete = (path: string) => this.request<void>("DELETE", path);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { detail: text };
  }
}

/** PUTs a tarball to a signed upload URL: the signature is the credential, so no key goes with it. */
export async function putTarball(uploadUrl: string, tarball: Uint8Array): Promise<void> {
  const response = await fetch(uploadUrl, {
    method: "PUT",
    body: new Blob([tarball as BlobPart], { type: "application/gzip" }),
    headers: { "Content-Type": "application/gzip" },
  });
  if (!response.ok) throw new ApiError(response.status, detailOf(safeJson(await response.text()), response.status));
}
