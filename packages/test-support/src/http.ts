/** What a JSON call answered: status, headers and the body parsed (text when it is not JSON; null when empty). */
export interface JsonResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** fetch with a JSON body (a string body is sent as is, to test malformed JSON). */
export async function fetchJson<T = unknown>(
  url: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] ??= "application/json";
  }
  return readJsonResponse<T>(await fetch(url, init));
}

/** Status, headers and the body as JSON (as text when it is not JSON; null when empty). */
export async function readJsonResponse<T = unknown>(response: Response): Promise<JsonResponse<T>> {
  const text = await response.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** `fetchJson` of `path` on a server at `base` (the agent server tests' spelling). */
export function request(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  return fetchJson(`${base}${path}`, method, body, headers);
}
