/**
 * The SDK's `Client`, made with no URL, reads its default URL and fetch from these globals (the reference server sets
 * them too): code running in this server, its graphs and its `http.app` routes, then reaches this server.
 */
const URL_GLOBAL = Symbol.for("langgraph_api:url");
const FETCH_GLOBAL = Symbol.for("langgraph_api:fetch");

type Globals = Record<symbol, unknown>;

/** The server's address as seen from its own process: a wildcard listen address is reached on loopback. */
export function ownAddress(listenUrl: string, mountPrefix = ""): string {
  const url = new URL(listenUrl);
  if (url.hostname === "0.0.0.0") url.hostname = "127.0.0.1";
  if (url.hostname === "[::]") url.hostname = "[::1]";
  return `${url.origin}${mountPrefix}`;
}

/**
 * Points `new Client()` at `url`, over loopback and through the same front door as any client (the project's app,
 * then the API). With a server key, requests to this server carry it: in place of any `X-Api-Key` the SDK took from
 * LANGGRAPH_API_KEY or LANGSMITH_API_KEY, which are not this server's key. Returns the undo, for a server that stops.
 */
export function exposeToOwnClients(url: string, apiKey: string | undefined): () => void {
  const globals = globalThis as unknown as Globals;
  const ownFetch: typeof fetch = (input, init) => {
    const target = input instanceof Request ? input.url : String(input);
    if (!apiKey || !(target === url || target.startsWith(`${url}/`) || target.startsWith(`${url}?`))) {
      return fetch(input, init);
    }
    const headers = new Headers(input instanceof Request ? input.headers : undefined);
    for (const [name, value] of new Headers(init?.headers)) headers.set(name, value);
    headers.set("x-api-key", apiKey);
    return fetch(input, { ...init, headers });
  };
  globals[URL_GLOBAL] = url;
  globals[FETCH_GLOBAL] = ownFetch;
  return () => {
    if (globals[FETCH_GLOBAL] !== ownFetch) return;
    delete globals[URL_GLOBAL];
    delete globals[FETCH_GLOBAL];
  };
}
