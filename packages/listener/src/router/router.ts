import { type Logger, servedWithoutKey } from "@berth/service-kit";
import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { AuthCache, type Authorization, type Authorize } from "./auth-cache.js";
import { forward } from "./forward.js";
import { apiKeyOf, type Credential, upstreamHeaders } from "./headers.js";
import { OpenRequests } from "./open-requests.js";
import { detail, refuseUpgrade, replyJson } from "./replies.js";
import { tunnel } from "./tunnel.js";

export type { Authorization, Authorize };

export interface RouterOptions {
  host: string;
  port: number;
  /** Checks x-api-key for a deployment; cached by the router for cacheTtlMs (default 5000) so a revoked key stops working within seconds. */
  authorize: Authorize;
  cacheTtlMs?: number;
  logger?: Logger;
  /** Base of the stable URLs when clients reach the router by another address (a public host, a TLS terminator). */
  publicUrl?: string;
}

interface Deployment {
  /** Where its requests go, round-robin: one per replica of the serving revision (none: 503 "not serving yet"). */
  targets: string[];
  next: number;
  /** The key the deployment's agent servers require: only the router holds it, so no other deployment can call them directly. */
  upstreamKey?: string;
  /** Asleep (no targets): starts its servers again and routes to them; rejects with the reason it cannot. */
  wake?: () => Promise<void>;
  /** The wake under way, shared by the requests that arrive during it. */
  waking?: Promise<void>;
}

const DEPLOYMENT_PATH = /^\/d\/([^/]+)(\/.*)?$/;

/**
 * Serves each deployment at a stable URL, `/d/<deployment id>/...`, by
 * forwarding to the process of its current revision. Checks the caller's API
 * key (through `authorize`, cached briefly), streams bodies both ways without
 * buffering, tunnels WebSocket upgrades (admitted alike), and counts what each
 * target still serves, open tunnels included, so a switch can wait for the old
 * revision to drain: setTarget(new), await drained(old), stop old.
 */
export class Router {
  private readonly deployments = new Map<string, Deployment>();
  private readonly open = new OpenRequests();
  private readonly auth: AuthCache;
  /** Pooled upstream connections: no connect per request; Node drops a pooled socket before the server's keep-alive timeout. */
  private readonly agent = new http.Agent({ keepAlive: true, scheduling: "lifo" });
  private readonly server: http.Server;
  /** How to cut each open WebSocket tunnel (at close, once the grace period is over). */
  private readonly tunnels = new Set<() => void>();
  /** When each deployment last had a request admitted (ms since the epoch), for the idle sleeper. */
  private readonly lastRequests = new Map<string, number>();
  private base: string | undefined;

  constructor(private readonly options: RouterOptions) {
    this.auth = new AuthCache(options.authorize, options.cacheTtlMs ?? 5000);
    this.server = http.createServer(
      // requestTimeout 0: an upload may take as long as it takes (headers still have to arrive in time).
      { noDelay: true, requestTimeout: 0 },
      (request, response) =>
        void this.handle(request, response).catch((error: unknown) => {
          // A bug here must cost one request, never the listener (an unhandled rejection would end it).
          this.options.logger?.error({ err: error, url: request.url }, "routing a request failed");
          replyJson(request, response, 500, detail("The router failed to handle this request"));
        }),
    );
    this.server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      void this.upgrade(request, socket, head).catch((error: unknown) => {
        this.options.logger?.error({ err: error, url: request.url }, "routing an upgrade failed");
        refuseUpgrade(socket, 500, detail("The router failed to handle this request"));
      });
    });
  }

  /** Starts listening; resolves with the base URL. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    const { port } = this.server.address() as AddressInfo;
    const host = this.options.host.includes(":") ? `[${this.options.host}]` : this.options.host;
    this.base = this.options.publicUrl?.replace(/\/+$/, "") ?? `http://${host}:${port}`;
    return this.base;
  }

  /** The stable URL of a deployment: `${base}/d/${deploymentId}`. */
  urlOf(deploymentId: string): string {
    if (!this.base) throw new Error("Router.urlOf: the router is not listening yet");
    return `${this.base}/d/${deploymentId}`;
  }

  /**
   * Points new requests of the deployment at `target` (null: 503 "not serving yet"); requests already forwarded keep going
   * where they went. `upstreamKey` is sent as the target's X-Api-Key (kept from the previous call when not given).
   */
  setTarget(deploymentId: string, target: string | null, upstreamKey?: string): void {
    this.setTargets(deploymentId, target === null ? [] : [target], upstreamKey);
  }

  /** As setTarget, for a revision served by several replicas: new requests go to each in turn. */
  setTargets(deploymentId: string, targets: string[], upstreamKey?: string): void {
    const key = upstreamKey ?? this.deployments.get(deploymentId)?.upstreamKey;
    this.deployments.set(deploymentId, {
      targets: targets.map(normalize),
      next: 0,
      ...(key ? { upstreamKey: key } : {}),
    });
  }

  /**
   * The deployment is asleep: its next request calls `wake` (once, however
   * many arrive meanwhile), is held until it resolves, then goes where the
   * wake routed it; a failed wake answers 503 with its reason.
   */
  setAsleep(deploymentId: string, wake: () => Promise<void>): void {
    const upstreamKey = this.deployments.get(deploymentId)?.upstreamKey;
    this.deployments.set(deploymentId, { targets: [], next: 0, wake, ...(upstreamKey ? { upstreamKey } : {}) });
  }

  /** When the deployment last had a request admitted (ms since the epoch); undefined: none since the listener started. */
  lastRequestAt(deploymentId: string): number | undefined {
    return this.lastRequests.get(deploymentId);
  }

  /** Forgets the deployment: its URL answers 404. Requests already forwarded finish. */
  remove(deploymentId: string): void {
    this.deployments.delete(deploymentId);
    this.lastRequests.delete(deploymentId);
    this.auth.forget(deploymentId);
  }

  /** Requests in flight to the deployment's current targets (the autoscaler's measure of load). */
  openRequests(deploymentId: string): number {
    const targets = this.deployments.get(deploymentId)?.targets ?? [];
    return targets.reduce((sum, target) => sum + this.open.count(target), 0);
  }

  /** Resolves when no request forwarded to `target` is still open (streams included). */
  drained(target: string): Promise<void> {
    return this.open.drained(normalize(target));
  }

  /** Stops listening; open requests and tunnels get `graceMs` (default 10 s) to finish, then their connections are cut. */
  async close(graceMs = 10_000): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    const timer = setTimeout(() => {
      this.server.closeAllConnections();
      // Upgraded sockets are no longer the HTTP server's connections: closeAllConnections does not see them.
      for (const cut of [...this.tunnels]) cut();
    }, graceMs);
    try {
      await closed;
    } finally {
      clearTimeout(timer);
      this.agent.destroy();
    }
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let clientGone = false;
    response.once("close", () => (clientGone = !response.writableFinished));
    const admission = await this.admit(request);
    if ("answer" in admission) {
      const { status, body, headers } = admission.answer;
      return replyJson(request, response, status, body, headers);
    }
    if (clientGone) return;
    const { deploymentId, target, path, headers } = admission;
    forward(
      {
        request,
        response,
        deploymentId,
        path,
        headers,
        currentTarget: () => this.currentTarget(deploymentId),
        open: this.open,
        agent: this.agent,
        logger: this.options.logger,
      },
      target,
    );
  }

  /** A WebSocket handshake: admitted as any request of the deployment is, then tunnelled to its serving revision. */
  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // Until the tunnel takes over, a failing client socket must not be an unhandled 'error'.
    socket.on("error", () => socket.destroy());
    if (!isWebSocketUpgrade(request)) {
      return refuseUpgrade(socket, 400, detail("Only WebSocket upgrades are forwarded (Upgrade: websocket on a GET)"));
    }
    const admission = await this.admit(request);
    if ("answer" in admission) {
      const { status, body, headers } = admission.answer;
      return refuseUpgrade(socket, status, body, headers);
    }
    if (socket.destroyed) return;
    const { deploymentId, target, path, headers } = admission;
    tunnel(
      {
        request,
        socket,
        head,
        deploymentId,
        path,
        headers,
        currentTarget: () => this.currentTarget(deploymentId),
        open: this.open,
        tunnels: this.tunnels,
        logger: this.options.logger,
      },
      target,
    );
  }

  /**
   * What every request of a deployment goes through, WebSocket handshakes
   * included: the deployment is known, the caller's key is allowed on it, and
   * one of its targets serves. Else the router's own answer.
   */
  private async admit(request: IncomingMessage): Promise<Admission> {
    const raw = request.url ?? "/";
    const queryAt = raw.indexOf("?");
    const pathname = queryAt >= 0 ? raw.slice(0, queryAt) : raw;
    const query = queryAt >= 0 ? raw.slice(queryAt) : "";
    const readOnly = request.method === "GET" || request.method === "HEAD";

    if (pathname === "/ok" && readOnly) return answer(200, { ok: true });
    const match = DEPLOYMENT_PATH.exec(pathname);
    if (!match) return answer(404, detail("Not found: deployments are served at /d/<deployment id>/..."));
    const deploymentId = decode(match[1]!);
    const rest = match[2] ?? "/";
    // Unknown ids are answered before any key check: no control-plane call for a made-up URL.
    if (!this.deployments.has(deploymentId)) return notFound(deploymentId);

    // CORS preflights, health checks and the API's docs (browsers send no key with them) go through without a key.
    let credential: Credential | undefined;
    if (request.method !== "OPTIONS" && !servedWithoutKey(request.method ?? "GET", rest)) {
      const found = apiKeyOf(request.headers);
      if (!found) return answer(401, detail("Missing API key: send X-Api-Key (or Authorization: Bearer <key>)"));
      let verdict: Authorization;
      try {
        verdict = await this.auth.check(deploymentId, found.key);
      } catch (error) {
        this.options.logger?.error({ err: error, deployment_id: deploymentId }, "checking an API key failed");
        return answer(503, detail("The API key could not be checked right now; try again"), { "retry-after": "1" });
      }
      if (verdict === "unknown_key") return answer(401, detail("Invalid API key"));
      if (verdict !== "allowed") {
        return answer(403, detail(`This API key is revoked or has no access to deployment ${deploymentId}`));
      }
      credential = found.from;
    }

    // Read after the key check: a switch during it already sends this request to the new revision.
    this.lastRequests.set(deploymentId, Date.now());
    let deployment = this.deployments.get(deploymentId);
    if (!deployment) return notFound(deploymentId);
    if (deployment.wake && deployment.targets.length === 0) {
      const woken = await this.wakeUp(deploymentId, deployment);
      if (woken) return woken;
      deployment = this.deployments.get(deploymentId);
      if (!deployment) return notFound(deploymentId);
    }
    const target = nextTarget(deployment);
    if (target === null) {
      return answer(503, detail(`Deployment ${deploymentId} is not serving yet`), { "retry-after": "5" });
    }
    return {
      deploymentId,
      target,
      path: `${rest}${query}`,
      headers: {
        ...upstreamHeaders(request, `/d/${match[1]}`, credential),
        ...(deployment.upstreamKey ? { "x-api-key": deployment.upstreamKey } : {}),
      },
    };
  }

  /** Holds the request while the sleeping deployment wakes (one wake for all); an answer only when the wake failed. */
  private async wakeUp(deploymentId: string, deployment: Deployment): Promise<Admission | undefined> {
    const wake = deployment.wake;
    if (!wake) return undefined;
    deployment.waking ??= wake().finally(() => (deployment.waking = undefined));
    try {
      await deployment.waking;
    } catch (error) {
      this.options.logger?.warn({ err: error, deployment_id: deploymentId }, "waking a deployment failed");
      return answer(503, detail(`Deployment ${deploymentId} could not wake: ${(error as Error).message}`), {
        "retry-after": "5",
      });
    }
    // A request counts from its answer on too: the deployment stays awake at least that long.
    this.lastRequests.set(deploymentId, Date.now());
    return undefined;
  }

  /** A retry after a refused connection goes to the next replica, or to the revision switched to meanwhile. */
  private currentTarget(deploymentId: string): string | null {
    const now = this.deployments.get(deploymentId);
    return now ? nextTarget(now) : null;
  }
}

/** Where an admitted request goes, or the router's own answer to it. */
type Admission =
  | { answer: { status: number; body: unknown; headers?: OutgoingHttpHeaders } }
  | { deploymentId: string; target: string; path: string; headers: OutgoingHttpHeaders };

function answer(status: number, body: unknown, headers?: OutgoingHttpHeaders): Admission {
  return { answer: { status, body, ...(headers ? { headers } : {}) } };
}

function notFound(deploymentId: string): Admission {
  return answer(404, detail(`Deployment ${deploymentId} not found`));
}

/** A WebSocket opening handshake (RFC 6455 §4.1): a GET whose Upgrade names websocket. */
function isWebSocketUpgrade(request: IncomingMessage): boolean {
  const protocols = (request.headers.upgrade ?? "").split(",").map((token) => token.trim().toLowerCase());
  return request.method === "GET" && protocols.includes("websocket");
}

/** The deployment's next target in turn, or null while none serves. */
function nextTarget(deployment: Deployment): string | null {
  if (deployment.targets.length === 0) return null;
  const target = deployment.targets[deployment.next % deployment.targets.length]!;
  deployment.next = (deployment.next + 1) % deployment.targets.length;
  return target;
}

/** One spelling per target, so drained() finds what setTarget() named. */
function normalize(target: string): string {
  return target.replace(/\/+$/, "");
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
