import { openSqliteDatabase } from "@berth/service-kit";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ControlPlaneStorage } from "../types.js";
import { SqliteApiKeyStore } from "./api-keys.js";
import { SqliteAuthStore } from "./auth.js";
import { SqliteConditionStore } from "./conditions.js";
import { SqliteDeploymentStore } from "./deployments.js";
import { SqliteIntegrationStore } from "./integrations.js";
import { SqliteListenerStore } from "./listeners.js";
import { SqliteDeploymentMetricStore } from "./deployment-metrics.js";
import { SqliteLogStore } from "./logs.js";
import { SqliteRevisionStore } from "./revisions.js";
import { SqliteTenantStore } from "./tenants.js";
import { SqliteTracingProjectStore } from "./tracing-projects.js";
import { SqliteTracingStore } from "./tracing.js";
import { SqliteUploadStore } from "./uploads.js";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");

/** The embedded storage: `control-plane.sqlite` (WAL) in the data directory. */
export function createSqliteStorage(dataDir: string): ControlPlaneStorage {
  // Every acknowledged change of desired state is fsynced: the control plane writes little and rarely.
  const db = openSqliteDatabase(join(dataDir, "control-plane.sqlite"), { migrationsDir: MIGRATIONS_DIR, synchronous: "full" });
  return {
    tenants: new SqliteTenantStore(db),
    apiKeys: new SqliteApiKeyStore(db),
    deployments: new SqliteDeploymentStore(db),
    revisions: new SqliteRevisionStore(db),
    conditions: new SqliteConditionStore(db),
    listeners: new SqliteListenerStore(db),
    integrations: new SqliteIntegrationStore(db),
    uploads: new SqliteUploadStore(db),
    tracingProjects: new SqliteTracingProjectStore(db),
    logs: new SqliteLogStore(db),
    deploymentMetrics: new SqliteDeploymentMetricStore(db),
    tracing: new SqliteTracingStore(db), // tracing
    auth: new SqliteAuthStore(db),
    async close() {
      db.close();
    },
  };
}
