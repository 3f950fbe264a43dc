// A client of the control plane's API, with an API key and a workspace.
import { fetchJson, type JsonResponse } from "./http.js";

export type Response<T> = JsonResponse<T>;

export type Call = <T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<Response<T>>;

export interface Api {
  call: Call;
  get<T = unknown>(path: string): Promise<Response<T>>;
  post<T = unknown>(path: string, body?: unknown): Promise<Response<T>>;
  patch<T = unknown>(path: string, body: unknown): Promise<Response<T>>;
  delete<T = unknown>(path: string): Promise<Response<T>>;
}

/** A client of the control plane at `base` with an API key and, optionally, a workspace (`X-Tenant-Id`). */
export function api(base: string, key?: string, tenant?: string): Api {
  const auth: Record<string, string> = {};
  if (key !== undefined) auth["X-Api-Key"] = key;
  if (tenant !== undefined) auth["X-Tenant-Id"] = tenant;
  const call: Call = (method, path, body, headers = {}) => fetchJson(`${base}${path}`, method, body, { ...auth, ...headers });
  return {
    call,
    get: (path) => call("GET", path),
    post: (path, body) => call("POST", path, body),
    patch: (path, body) => call("PATCH", path, body),
    delete: (path) => call("DELETE", path),
  };
}
