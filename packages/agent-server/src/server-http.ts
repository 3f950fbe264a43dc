import type { FastifyInstance } from "fastify";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { buildApp } from "./http/app.js";
import { type CustomAppServer, serveCustomApp } from "./http/custom-app.js";
import { customAppGates } from "./http/custom-app-auth.js";
import { serveHealthOnly } from "./http/health-only.js";
import { exposeToOwnClients, ownAddress } from "./http/own-client.js";
import type { Logger } from "./logger.js";
import type { ServerSetup } from "./server-setup.js";
import type { Services } from "./services/index.js";

const require = createRequire(import.meta.url);

/**
 * Connections the kernel queues before the server accepts them (Node's default is 511): a burst of thousands of
 * stream subscribers would otherwise see resets. Linux caps it at net.core.somaxconn.
 */
const LISTEN_BACKLOG = 4096;

function versions() {
  return {
    version: (require("../package.json") as { version: string }).version,
    langgraph_js_version: (require("@langchain/langgraph/package.json") as { version: string }).version,
  };
}

/** Where a server listens, and the logger its start-up line goes to. */
export interface Listening {
  host: string;
  port: number;
  logger: Logger;
}

/**
 * A server's HTTP side: the API (behind the project's `http.app` when it has one), or a worker's `GET /ok`. It is
 * closed as a whole, whatever of it had started.
 */
export class HttpSide {
  app?: FastifyInstance;
  url?: string;
  /** This server's address for code running in it (runs, the project's own clients), known once the API listens. */
  ownUrl?: string;
  private front?: CustomAppServer;
  private health?: { close(): Promise<void> };
  private hideFromOwnClients?: () => void;

  constructor(private readonly graceMs: number) {}

  /** `details`: what the start-up log line says beside the address. */
  async serveApi(setup: ServerSetup, services: Services, where: Listening, details: object): Promise<void> {
    const { settings, project, authentication, customApp } = setup;
    const { logger } = where;
    this.app = await buildApp(services, {
      logger,
      bodyLimit: settings.bodyLimitBytes,
      info: { ...versions(), tracing: settings.tracing !== undefined },
      timings: { heartbeatMs: settings.streamHeartbeatMs, keepAliveMs: settings.waitKeepAliveMs },
      apiKey: settings.apiKey,
      internalTruncate: settings.internalTruncate,
      authentication,
      openapiSecurity: project.auth.openapi,
      http: project.http,
      ui: setup.ui,
      apiUrl: settings.langgraphApiUrl,
    });
    if (customApp) {
      // The project's app takes the public address; the API listens where only it reaches (custom-app.ts says why).
      await this.app.listen({ host: "127.0.0.1", port: 0 });
      const apiPort = (this.app.server.address() as AddressInfo).port;
      const gates = customAppGates({ apiKey: settings.apiKey, authentication, http: project.http, logger });
      this.front = await serveCustomApp(where.host, where.port, { app: customApp, apiPort, gates, logger });
      this.url = this.front.url;
      logger.info({ app: project.http.app?.spec }, "http.app serves in front of the API");
    } else {
      this.url = await this.app.listen({ host: where.host, port: where.port, backlog: LISTEN_BACKLOG });
    }
    this.ownUrl = ownAddress(this.url, project.http.mountPrefix);
    this.hideFromOwnClients = exposeToOwnClients(this.ownUrl, settings.apiKey);
    logger.info({ url: this.url, ...details }, "agent server listening");
    if (settings.internalTruncate)
      logger.warn("POST /internal/truncate is enabled (BERTH_INTERNAL_TRUNCATE): any client can empty the database");
  }

  /** A worker given a port answers `GET /ok` there (and nothing else), for a supervisor's health checks. */
  async serveWorkerHealth(withHealth: boolean, where: Listening, details: object): Promise<void> {
    const health = withHealth ? await serveHealthOnly(where.host, where.port) : undefined;
    this.health = health;
    this.url = health?.url;
    where.logger.info({ ...details, health: this.url }, "worker ready");
  }

  /** Lets open responses (streams, waits) finish within the grace period, then cuts them. */
  async close(): Promise<void> {
    const { app, graceMs } = this;
    await Promise.all([this.front?.close(graceMs), app && closeWithin(app, graceMs)]);
    await this.health?.close();
    this.hideFromOwnClients?.();
  }
}

/** Lets open responses (streams, waits) finish for up to `graceMs`, then cuts them. */
async function closeWithin(app: FastifyInstance, graceMs: number): Promise<void> {
  const timer = setTimeout(() => app.server.closeAllConnections(), graceMs);
  timer.unref();
  await app.close();
  clearTimeout(timer);
}
