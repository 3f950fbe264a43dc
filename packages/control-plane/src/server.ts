import { createServiceLogger, Lifecycle, type Logger, warnIfPostgresTrustsAnyone } from "@berth/service-kit";
import type { FastifyInstance } from "fastify";
import { createRequire } from "node:module";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { bootstrap } from "./api-keys/bootstrap.js";
import { type ControlPlaneSettings, readSettings } from "./config/settings.js";
import { loadSecretsKey, SecretBox } from "./domain/secret-box.js";
import { buildApp } from "./http/app.js";
import { startEmbeddedListener } from "./embedded-link.js";
import type { RevisionEventListener } from "./services/change-feed.js";
import { createServices, openChangeFeed } from "./services/index.js";
import type { RegistrySettings } from "./services/registry-tokens.js";
import { openStorage } from "./storage/open.js";
import { loadRegistryKeys } from "./services/registry-signing-keys.js";
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
  // The key first: a wrong one must not leave storage open.
  const box = new SecretBox(loadSecretsKey(settings.secretsKey, join(dataDir, "secrets.key")));
  const storage = await openStorage(dataDir, settings.databaseUrl, settings.pgPoolSize);
  return { storage, box };
}

/** Serves the /v2/deployments API (and the same under /api-host). */
export async function startControlPlane(options: ControlPlaneOptions): Promise<RunningControlPlane> {
  const logger = options.logger ?? createServiceLogger("control-plane");
  const settings = { ...readSettings(), ...options.settings };
  const dataDir = options.dataDir ?? defaultDataDir();
  return new Lifecycle().run(async (parts) => {
    const { storage, box } = await openControlPlaneState(dataDir, settings);
    parts.own(storage);
    if (settings.databaseUrl) void warnIfPostgresTrustsAnyone(settings.databaseUrl, "DATABASE_URL", logger);
    const changes = parts.own(await openChangeFeed(settings.databaseUrl, logger));
    if (options.onRevisionEvent) changes.subscribe("revision", options.onRevisionEvent);
    const first = await bootstrap(storage, settings, join(dataDir, "admin.key"), logger);
    const registryDir = join(dataDir, "registry");
    const registry = settings.registryPort ? await registrySettingsOf(settings, registryDir) : undefined;
    const uploadsDir = join(dataDir, "uploads");
    const services = createServices({ storage, box, changes, settings, uploadsDir, registry, logger });
    let url: string | undefined;
    const listener = settings.embeddedListener
      ? parts.own(
          await startEmbeddedListener({
            api: services.listenerApi,
            changes,
            settings,
            dataDir: join(dataDir, "listener"),
            host: options.host,
            controlPlaneUrl: () => settings.publicUrl ?? url,
            logger: logger.child({ component: "listener" }),
          }),
        )
      : undefined;
    const app = parts.own(
      await buildApp(storage, services, {
        logger,
        version: VERSION,
        publicUrl: settings.publicUrl,
        listenUrl: () => url,
        routerUrls: [...(listener ? [listener.routerUrl] : []), ...settings.listenerRouterUrls],
        dashboardDir: settings.dashboardDir,
      }),
    );
    await app.listen({ host: options.host, port: options.port });
    url = listenUrlOf(app, options);
    if (registry) {
      parts.own(
        await startRegistryProcess({
          dir: registryDir,
          port: settings.registryPort!,
          realm: `${settings.publicUrl ?? url}/v1/registry/token`,
          ...REGISTRY_TOKEN_NAMES,
          certificateFile: registry.keys.certificateFile,
          logger: logger.child({ component: "registry" }),
        }),
      );
    }
    const backend = settings.databaseUrl ? "postgres" : "sqlite";
    logger.info({ url, router_url: listener?.routerUrl, backend, data_dir: dataDir }, "control plane listening");
    process.stdout.write(banner(url, listener?.routerUrl, first, settings, join(dataDir, "admin.key")));
    return { url, routerUrl: listener?.routerUrl, app, storage, close: () => parts.close() };
  });
}

/** The platform's image registry: its address, keys and token names. */
async function registrySettingsOf(settings: ControlPlaneSettings, registryDir: string): Promise<RegistrySettings> {
  return {
    address: settings.registryAddress ?? `127.0.0.1:${settings.registryPort}`,
    keys: await loadRegistryKeys(registryDir),
    ...REGISTRY_TOKEN_NAMES,
    pushTokenTtlSeconds: settings.pushTokenTtlSeconds,
    storageDir: registryStorageOf(registryDir),
  };
}

/** The URL the app listens on (with the port the system chose for port 0). */
function listenUrlOf(app: FastifyInstance, options: ControlPlaneOptions): string {
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  return `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`;
}

/** What the operator reads at start: where everything is, and which key to use. */
function banner(
  url: string,
  routerUrl: string | undefined,
  first: { tenantId: string; createdKey?: string },
  settings: ControlPlaneSettings,
  keyFile: string,
): string {
  return (
    `\nBerth control plane at ${url}` +
    (routerUrl ? `; deployments are served at ${routerUrl}/d/<deployment id>` : "") +
    `\n  workspace (X-Tenant-Id): ${first.tenantId}` +
    (first.createdKey
      ? `\n  admin API key (X-Api-Key): ${first.createdKey}\n  (shown once; also kept in ${keyFile})`
      : settings.adminApiKey
        ? "\n  admin API key: BERTH_ADMIN_API_KEY"
        : existsSync(keyFile)
          ? `\n  admin API key: in ${keyFile}`
          : "") +
    `\n  dashboard: open ${url}/ in a browser and enter the key` +
    "\n\n"
  );
}
