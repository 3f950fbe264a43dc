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

  private headers(extra: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = { "X-Api-Key": this.credentials.apiKey, ...extra };
    if (this.credentials.tenantId) headers["X-Tenant-Id"] = this.credentials.tenantId;
    return headers;
  }

  private async failure(response: Response): Promise<ApiError> {
    const text = await response.text();
    if (response.status === 401) this.onUnauthorized();
    return new ApiError(response.status, detailOf(text ? safeJson(text) : null, response.status));
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(new URL(path, document.baseURI), {
      method,
      headers: this.headers(body === undefined ? {} : { "Content-Type": "application/json" }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw await this.failure(response);
    const text = await response.text();
    return (text ? safeJson(text) : null) as T;
  }

  /** Opens a Server-Sent Events stream (GET); `lastEventId` resumes after the event of that id. */
  async stream(path: string, signal: AbortSignal, lastEventId?: string): Promise<ReadableStream<Uint8Array>> {
    const response = await fetch(new URL(path, document.baseURI), {
      headers: this.headers({ Accept: "text/event-stream", ...(lastEventId ? { "Last-Event-ID": lastEventId } : {}) }),
      signal,
    });
    if (!response.ok) throw await this.failure(response);
    if (!response.body) throw new ApiError(response.status, "The control plane sent no stream");
    return response.body;
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
