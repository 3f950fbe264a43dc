import { join } from "node:path";
import { type SystemAssistantDefaults, systemAssistantDefaults } from "./config/assistant-defaults.js";
import type { CustomAppSpec } from "./config/http-config.js";
import { ConfigError, loadProjectConfig, type ProjectConfig } from "./config/langgraph-config.js";
import {
  applyProjectEnv,
  builtinAuthSettingsFromEnv,
  environment,
  type ServerSettings,
  settingsFromEnv,
} from "./config/settings.js";
import { type WebhookSettings, webhookSettings } from "./config/webhook-config.js";
import { type CustomApp, CustomAppLoadError, loadCustomApp } from "./graphs/custom-app-module.js";
import { pinLangChainPackages, projectModuleDirs } from "./graphs/pin-packages.js";
import { beforeProjectModules } from "./graphs/project-module.js";
import { poolRandomValues } from "./graphs/pooled-random-values.js";
import { configureSchemaReading } from "./graphs/schemas.js";
import { bundleUi, type UiBundles } from "./graphs/ui-bundle.js";
import { type AuthenticationSetup, loadAuthentication } from "./http/auth/setup.js";
import type { Logger } from "./logger.js";
import type { TestFaults } from "./runs/execution/test-faults.js";

/** api: serves HTTP; worker: executes runs; all: both (the embedded default). */
export type ServerRole = "api" | "worker" | "all";

export interface ServerOptions {
  /** A project directory or its langgraph.json. */
  config: string;
  host: string;
  port: number;
  role?: ServerRole;
  /** A worker answers `GET /ok` on host:port (and nothing else), for a supervisor's health checks. */
  workerHealth?: boolean;
  /** Where the SQLite database lives; default `.berth/` beside langgraph.json. */
  dataDir?: string;
  /** Overrides of the settings read from the environment. */
  settings?: Partial<ServerSettings>;
  logger?: Logger;
  /** `berth dev`: webhooks may target private and loopback addresses unless BERTH_WEBHOOK_ALLOW_PRIVATE says otherwise. */
  dev?: boolean;
  /** Test-only faults injected into the worker (test/helpers/serve-with-faults.ts); never set in production. */
  faults?: TestFaults;
}

/** Everything a server is built from, read and checked before any backend opens. */
export interface ServerSetup {
  role: ServerRole;
  project: ProjectConfig;
  settings: ServerSettings;
  dataDir: string;
  authentication?: AuthenticationSetup;
  assistantDefaults: SystemAssistantDefaults;
  customApp?: CustomApp;
  webhooks: WebhookSettings;
  webhookAllowPrivate: boolean;
  /** The project's UI components, bundled (API processes of projects that declare some). */
  ui?: UiBundles;
}

/**
 * Reads the project and the settings, applying the project's env first (the settings, auth variables and header
 * templates may read what it sets). A broken http.app or UI component stops the start here, like a broken graph.
 */
export async function prepareServer(options: ServerOptions, logger: Logger): Promise<ServerSetup> {
  const role = options.role ?? "all";
  const project = loadProjectConfig(options.config, environment());
  for (const warning of project.warnings) logger.warn(warning);
  applyProjectEnv(project.env);
  beforeProjectModules(() => pinLangChainPackages(projectModuleDirs(project)));
  // After the project's env, which may set BERTH_AUTH_* (and the module may read its variables).
  const authentication = await loadAuthentication(project.auth, builtinAuthSettingsFromEnv(), logger);
  const settings = { ...settingsFromEnv(), ...options.settings };
  const assistantDefaults = systemAssistantDefaults(settings.langgraphConfig);
  poolRandomValues();
  // Workers load http.app too: they deliver the webhooks that name one of its paths.
  const customApp = project.http.app ? await loadProjectApp(project.http.app) : undefined;
  if (role !== "all" && !settings.databaseUrl) {
    throw new ConfigError(`--role ${role} needs a shared database: set DATABASE_URL (and REDIS_URL)`);
  }
  const dataDir = options.dataDir ?? join(project.projectDir, ".berth");
  configureSchemaReading({ ...settings.schemas, cacheDir: settings.schemas.cacheDir ?? join(dataDir, "schema-cache") });
  const ui =
    role !== "worker" && project.ui.entries.length > 0 ? await bundleUi(project.ui, join(dataDir, "ui-cache")) : undefined;
  return {
    role,
    project,
    settings,
    dataDir,
    authentication,
    assistantDefaults,
    customApp,
    webhooks: webhookSettings(project.webhooks, environment()),
    webhookAllowPrivate: settings.webhookAllowPrivate ?? options.dev ?? false,
    ui,
  };
}

/** `http.app`'s module, its failures told as configuration errors (naming the file and the export). */
async function loadProjectApp(spec: CustomAppSpec): Promise<CustomApp> {
  try {
    return await loadCustomApp(spec);
  } catch (error) {
    if (error instanceof CustomAppLoadError) throw new ConfigError(error.message);
    throw error;
  }
}
