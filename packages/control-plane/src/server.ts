import { createServiceLogger, type Logger, warnIfPostgresTrustsAnyone } from "@berth/service-kit";
import type { FastifyInstance } from "fastify";
import { createRequire } from "node:module";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { bootstrap } from "./auth/bootstrap.js";
import { type ControlPlaneSettings, readSettings } from "./config/settings.js";
import { loadSecretsKey, SecretBox } from "./domain/secret-box.js";
import { buildApp } from "./http/app.js";
import { startEmbeddedListener } from "./embedded-link.js";
import type { RunningListener } from "@berth/listener";
import type { ChangeFeed, RevisionEventListener } from "./services/change-feed.js";
import { createServices, openChangeFeed } from "./services/index.js";
import { openStorage } from "./storage/open.js";
import { loadRegistryKeys } from "./auth/registry-keys.js";
import { registryStorageOf, startRegistryProcess } from "@berth/listener";
import type { ControlPlaneStorage } from "./storage/types.js";

export interface ControlPlaneOptions {
  host: string;
  port: number;
  /** SQLite file, secrets key and uploaded tarballs; default `.berth/control-plane` in the working directory. */
  dataDir?: string;
  settings?: Partial<ControlPlaneSettings>;
  logger?: Logger;
  /**
   * Told of every revision made and every status move (from the start,
   * before the listener resumes work): this process's, and those of the
   * control-plane processes sharing its PostgreSQL database.
   */
  onRevisionEvent?: RevisionEventListener;
}

export interface RunningControlPlane {
  url: string;
  /** The embedded listener's router (deployment URLs), when it runs. */
  routerUrl?: string;
  app: FastifyInstance;
  storage: ControlPlaneStorage;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);
const VERSION = (require("../package.json") as { version: string }).version;

export const defaultDataDir = () => join(process.cwd(), ".berth", "control-plane");

/** The registry's `auth.token.service` and `issuer`, as the control plane's tokens name them. */
const REGISTRY_TOKEN_NAMES = { service: "berth-registry", issuer: "berth-control-plane" };

/** Files of the data directory that hold secrets (the database is protected by the directory). */
const KEY_FILES = ["admin.key", "secrets.key"];

/**
 * The data directory holds the keys, the database (every workspace's
 * secrets, encrypted with secrets.key) and the listener's data: only the
 * control plane's user may enter it, and the key files are its alone, even
 * when an older version or a loose umask created them otherwise.
 */
function secureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  for (const name of KEY_FILES) {
    const file = join(dataDir, name);
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}

/** Opens storage and a secrets key (both for the admin commands too). */
export async function openControlPlaneState(dataDir: string, settings: ControlPlaneSettings) {
  secureDataDir(dataDir);
  const storage = await openStorage(dataDir, settings.databaseUrl, settings.pgPoolSize);
  const box = new SecretBox(loadSecretsKey(settings.secretsKey, join(dataDir, "secrets.key")));
  return { storage, box };
}

/** Serves the /v2/deployments API (and the same under /api-host). */
export async function startControlPlane(options: ControlPlaneOptions): Promise<RunningControlPlane> {
  const logger = options.logger ?? createServiceLogger("control-plane");
  const settings = { ...readSettings(), ...options.settings };
  const dataDir = options.dataDir ?? defaultDataDir();
  const { storage, box } = await openControlPlaneState(dataDir, settings);
  if (settings.databaseUrl) void warnIfPostgresTrustsAnyone(settings.databaseUrl, "DATABASE_URL", logger);
  let changes: ChangeFeed | undefined;
  let listener: RunningListener | undefined;
  let registry: { close(): Promise<void> } | undefined;
  let url: string | undefined;
  try {
    const first = await bootstrap(storage, settings, join(dataDir, "admin.key"), logger);
    const registryDir = join(dataDir, "registry");
    const registrySettings = settings.registryPort
      ? {
          address: settings.registryAddress ?? `127.0.0.1:${settings.registryPort}`,
          keys: await loadRegistryKeys(registryDir),
          ...REGISTRY_TOKEN_NAMES,
          pushTokenTtlSeconds: settings.pushTokenTtlSeconds,
          storageDir: registryStorageOf(registryDir),
        }
      : undefined;
    changes = await openChangeFeed(settings.databaseUrl, logger);
    if (options.onRevisionEvent) changes.subscribe("revision", options.onRevisionEvent);
    const uploadsDir = join(dataDir, "uploads");
    const services = createServices({ storage, box, changes, settings, uploadsDir, registry: registrySettings, logger });
    listener = settings.embeddedListener
      ? await startEmbeddedListener({
          api: services.listenerApi,
          changes,
          settings,
          dataDir: join(dataDir, "listener"),
          host: options.host,
          controlPlaneUrl: () => settings.publicUrl ?? url,
          logger: logger.child({ component: "listener" }),
        })
      : undefined;
    const app = await buildApp(storage, services, {
      logger,
      version: VERSION,
      publicUrl: settings.publicUrl,
      listenUrl: () => url,
      routerUrls: [...(listener ? [listener.routerUrl] : []), ...settings.listenerRouterUrls],
    });
    await app.listen({ host: options.host, port: options.port });
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : options.port;
    url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`;
    registry = registrySettings
      ? await startRegistryProcess({
          dir: registryDir,
          port: settings.registryPort!,
          realm: `${settings.publicUrl ?? url}/v1/registry/token`,
          ...REGISTRY_TOKEN_NAMES,
          certificateFile: registrySettings.keys.certificateFile,
          logger: logger.child({ component: "registry" }),
        })
      : undefined;
    logger.info(
      { url, router_url: listener?.routerUrl, backend: settings.databaseUrl ? "postgres" : "sqlite", data_dir: dataDir },
      "control plane listening",
    );
    const keyFile = join(dataDir, "admin.key");
    process.stdout.write(
      `\nBerth control plane at ${url}` +
        (listener ? `; deployments are served at ${listener.routerUrl}/d/<deployment id>` : "") +
        `\n  workspace (X-Tenant-Id): ${first.tenantId}` +
        (first.createdKey
          ? `\n  admin API key (X-Api-Key): ${first.createdKey}\n  (shown once; also kept in ${keyFile})`
          : settings.adminApiKey
            ? "\n  admin API key: BERTH_ADMIN_API_KEY"
            : existsSync(keyFile)
              ? `\n  admin API key: in ${keyFile}`
              : "") +
        `\n  dashboard: open ${url}/ in a browser and enter the key` +
        "\n\n",
    );
    return {
      url,
      routerUrl: listener?.routerUrl,
      app,
      storage,
      async close() {
        await app.close();
        await listener?.close();
        await registry?.close();
        await changes?.close();
        await storage.close();
      },
    };
  } catch (error) {
    await listener?.close();
    await registry?.close();
    await changes?.close();
    await storage.close();
    throw error;
  }
}
