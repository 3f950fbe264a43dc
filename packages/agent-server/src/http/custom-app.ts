import { AsyncLocalStorage } from "node:async_hooks";
import { once } from "node:events";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import type { Logger } from "pino";
import { type CustomApp, isRoutable, type RoutedContext } from "../graphs/custom-app-module.js";
import { ApiForwarder, type ForwardBody, HOP_BY_HOP } from "./api-forward.js";
import type { OwnRouteDelivery } from "../runs/webhooks/deliverer.js";
import type { RequestGate } from "./custom-app-auth.js";
import { UpgradeTunnels } from "./upgrade-tunnel.js";

/**
 * `http.app`: the project's web app (a Hono app, or anything with `fetch(request)`) in front of the API.
 *
 * The public listener turns each request into a web Request and gives it to the app. Its routes answer first;
 * what it has no route for goes on to the API, which listens on a private loopback port: a Hono app gets a
 * catch-all route, registered after everything the module registered, so the app's middleware wraps the API's
 * answers as it wraps its own routes (it may rewrite the request, its body included, and the response). A plain
 * fetch app's 404 hands the request to the API instead. Responses are written as they come: run streams stay streams.
 * `GET /ok` skips the app, so health checks do not depend on it; so do upgrade requests (protocol v2's
 * WebSocket), tunnelled to the API as they came.
 */
export interface CustomAppServer {
  url: string;
  /** Stops taking connections; open ones are cut after `graceMs`. */
  close(graceMs: number): Promise<void>;
}

export interface CustomAppOptions {
  app: CustomApp;
  /** The API's private loopback port. */
  apiPort: number;
  /** Checks made before the app sees a request (the server key; authentication when the project asks for it). */
  gates: RequestGate[];
  logger: Logger;
}

export async function serveCustomApp(host: string, port: number, options: CustomAppOptions): Promise<CustomAppServer> {
  const forwarder = new ApiForwarder(options.apiPort);
  const dispatch = dispatcher(options, forwarder);
  const server = http.createServer((incoming, outgoing) => {
    void handle(incoming, outgoing, dispatch, forwarder, options);
  });
  const tunnels = new UpgradeTunnels(options.apiPort);
  server.on("upgrade", (request, socket, head) => tunnels.tunnel(request, socket, head));
  server.listen(port, host);
  await once(server, "listening");
  const address = server.address() as AddressInfo;
  const shown = address.address.includes(":") ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    async close(graceMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => {
        server.closeAllConnections();
        tunnels.closeAll();
      }, graceMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
      forwarder.close();
    },
  };
}

/** Set while a webhook is delivered to the app: those reach the project's routes only, never the API behind them. */
const webhookDelivery = new AsyncLocalStorage<true>();
const NO_WEBHOOK_ROUTE = "No route of the project's http.app for this webhook";

/**
 * Delivers webhooks that name a path (`/custom/webhook`) to the project's app, in process: the request goes to its
 * `fetch` as a client's would, but without the server key's or authentication's gates (it comes from the server) and
 * never on to the API.
 */
export function customAppWebhooks(app: CustomApp): OwnRouteDelivery {
  return async (path, body, headers, timeoutMs) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const request = new Request(new URL(path, "http://127.0.0.1"), { method: "POST", headers, body, signal: timeout });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const response = await Promise.race([webhookDelivery.run(true, async () => app.fetch(request)), timedOut]);
      await response.body?.cancel();
      return { kind: "answered", status: response.status };
    } catch (error) {
      return { kind: "no_answer", error: `the project's http.app failed: ${(error as Error).message}`, refused: false };
    } finally {
      clearTimeout(timer);
    }
  };
}

type Dispatch = (request: Request, signal: AbortSignal) => Promise<Response>;

/** The app, with the API behind it for what it does not answer. */
function dispatcher(options: CustomAppOptions, forwarder: ApiForwarder): Dispatch {
  const { app } = options;
  if (isRoutable(app)) {
    app.all("*", async (context: RoutedContext) => {
      if (webhookDelivery.getStore()) return Response.json({ detail: NO_WEBHOOK_ROUTE }, { status: 404 });
      // The request as the app's middleware left it (they may replace it); it carries the client's abort signal.
      const request = context.req.raw;
      const body = request.bodyUsed ? await cachedBody(context) : request.body;
      return relay(context, await forwarder.forward(request, body, request.signal));
    });
    return async (request) => app.fetch(request);
  }
  return async (request, signal) => {
    const response = await app.fetch(request.clone());
    if (response.status !== 404) return response;
    await response.body?.cancel();
    return forwarder.forward(request, request.body, signal);
  };
}

/** What Hono kept of a body the app's middleware read (the request's own stream is spent by then). */
async function cachedBody(context: RoutedContext): Promise<ForwardBody> {
  const cache = context.req.bodyCache ?? {};
  if (cache.text) return String(await cache.text);
  if (cache.arrayBuffer) return new Uint8Array((await cache.arrayBuffer) as ArrayBuffer);
  if (cache.json) return JSON.stringify(await cache.json);
  return null;
}

/** The API's response through Hono's context, so headers the middleware set before `next()` are kept. */
function relay(context: RoutedContext, response: Response): Response {
  return context.body ? context.body(response.body, { status: response.status, headers: response.headers }) : response;
}

async function handle(
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  dispatch: Dispatch,
  forwarder: ApiForwarder,
  { gates, logger }: CustomAppOptions,
): Promise<void> {
  const aborted = new AbortController();
  outgoing.on("close", () => aborted.abort());
  const request = toWebRequest(incoming, aborted.signal);
  try {
    const isHealth = request.method === "GET" && new URL(request.url).pathname === "/ok";
    let response = isHealth ? await forwarder.forward(request, null, aborted.signal) : undefined;
    for (const gate of gates) response ??= await gate(request);
    response ??= await dispatch(request, aborted.signal);
    await writeResponse(outgoing, response);
  } catch (error) {
    if (aborted.signal.aborted) return;
    logger.error({ err: error, method: incoming.method, url: incoming.url }, "http.app failed to answer");
    if (outgoing.headersSent) {
      outgoing.destroy();
      return;
    }
    outgoing.writeHead(500, { "content-type": "application/json" });
    outgoing.end(JSON.stringify({ detail: "The project's http.app failed to answer" }));
  }
}

function toWebRequest(incoming: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i < incoming.rawHeaders.length; i += 2) headers.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!);
  const url = new URL(incoming.url ?? "/", `http://${incoming.headers.host ?? "localhost"}`);
  const method = incoming.method ?? "GET";
  const withBody = method !== "GET" && method !== "HEAD";
  // A streamed body needs `duplex` (Node's fetch has it; the DOM types do not yet).
  const init: RequestInit & { duplex: "half" } = {
    method,
    headers,
    signal,
    body: withBody ? (Readable.toWeb(incoming) as ReadableStream<Uint8Array>) : undefined,
    duplex: "half",
  };
  return new Request(url, init);
}

/** Writes a web Response chunk by chunk (flushing the head first: an event stream's client waits for it). */
async function writeResponse(outgoing: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) if (!HOP_BY_HOP.has(name) || name === "content-length") headers[name] = value;
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  outgoing.writeHead(response.status, response.statusText || undefined, headers);
  outgoing.flushHeaders();
  if (!response.body) {
    outgoing.end();
    return;
  }
  const reader = response.body.getReader();
  outgoing.once("close", () => void reader.cancel().catch(() => undefined));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (outgoing.destroyed) return;
    if (!outgoing.write(value)) await Promise.race([once(outgoing, "drain"), once(outgoing, "close")]);
  }
  outgoing.end();
}
