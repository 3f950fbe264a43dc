import { openPostgresDatabase } from "@berth/service-kit";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ControlPlaneStorage } from "../types.js";
import { PostgresApiKeyStore } from "./api-keys.js";
import { PostgresAuthStore } from "./auth.js";
import { PostgresConditionStore } from "./conditions.js";
import { PostgresDeploymentStore } from "./deployments.js";
import { PostgresIntegrationStore } from "./integrations.js";
import { PostgresListenerStore } from "./listeners.js";
import { PostgresDeploymentMetricStore } from "./deployment-metrics.js";
import { PostgresLogStore } from "./logs.js";
import { PostgresRevisionStore } from "./revisions.js";
import { PostgresTenantStore } from "./tenants.js";
import { PostgresTracingProjectStore } from "./tracing-projects.js";
import { PostgresUploadStore } from "./uploads.js";
import { PostgresTracingStore } from "./tracing.js";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");

export interface PostgresStorageOptions {
  /** Most connections the pool opens (default 10). */
  poolSize?: number;
}

/**
 * Storage in a PostgreSQL database that several control-plane processes may
 * share: `url` is a libpq connection URI (a schema other than public through
 * `?options=-c%20search_path%3Dname`). The migrations are recorded in their own
 * table, `control_plane_migrations`, so the database can also hold an agent
 * server's tables. Migrations are applied before this resolves.
 */
export async function createPostgresStorage(url: string, options: PostgresStorageOptions = {}): Promise<ControlPlaneStorage> {
  const pool = await openPostgresDatabase(url, {
    migrationsDir: MIGRATIONS_DIR,
    migrationsTable: "control_plane_migrations",
    poolSize: options.poolSize,
  });
  let closing: Promise<void> | undefined;
  return {
    tenants: new PostgresTenantStore(pool),
    apiKeys: new PostgresApiKeyStore(pool),
    deployments: new PostgresDeploymentStore(pool),
    revisions: new PostgresRevisionStore(pool),
    conditions: new PostgresConditionStore(pool),
    listeners: new PostgresListenerStore(pool),
    integrations: new PostgresIntegrationStore(pool),
    uploads: new PostgresUploadStore(pool),
    tracingProjects: new PostgresTracingProjectStore(pool),
    logs: new PostgresLogStore(pool),
    deploymentMetrics: new PostgresDeploymentMetricStore(pool),
    tracing: new PostgresTracingStore(pool), // tracing
    auth: new PostgresAuthStore(pool),
    close() {
      closing ??= pool.end(); // pool.end() throws when called twice
      return closing;
    },
  };
}
