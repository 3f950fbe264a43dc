export { apiKeyRecord, describeApiKey, generateApiKey } from "./api-keys/api-keys.js";
export { readSettings, type ControlPlaneSettings } from "./config/settings.js";
export { defaultDataDir, openControlPlaneState, startControlPlane, type RunningControlPlane } from "./server.js";
export type { ControlPlaneStorage, IntegrationRecord, RepositoryRecord } from "./storage/types.js";
export { integrationAdmin } from "./services/integration-admin.js";
export type { RevisionCause, RevisionEvent, RevisionEventListener } from "./services/change-feed.js";
