export { apiKeyRecord, describeApiKey, generateApiKey } from "./auth/api-keys.js";
export { readSettings, type ControlPlaneSettings } from "./config/settings.js";
export { defaultDataDir, openControlPlaneState, startControlPlane, type RunningControlPlane } from "./server.js";
export type { ControlPlaneStorage, IntegrationRecord, RepositoryRecord } from "./storage/types.js";
export { HttpLink } from "./listener/http-link.js";
export { integrationAdmin } from "./services/integration-admin.js";
export { startListener, type RunningListener } from "./listener/listener.js";
export { renderForReview } from "./listener/cluster-rollouts.js";
