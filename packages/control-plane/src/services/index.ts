import type { SecretBox } from "../domain/secret-box.js";
import type { ControlPlaneStorage } from "../storage/types.js";
import { DeploymentService } from "./deployments.js";
import { IntegrationService } from "./integrations.js";
import { ListenerApi } from "./listener-api.js";
import { ListenerService } from "./listeners.js";
import { LogService } from "./logs.js";
import { type RegistrySettings, RegistryTokenService } from "./registry-tokens.js";
import { RevisionWatch } from "./revision-watch.js";
import { RevisionService } from "./revisions.js";
import { UploadService, type UploadSettings } from "./uploads.js";
import { createTracingService, type TracingService, type TracingSettings } from "../tracing/service.js";

export interface Services {
  deployments: DeploymentService;
  revisions: RevisionService;
  uploads: UploadService;
  listeners: ListenerService;
  integrations: IntegrationService;
  logs: LogService;
  listenerApi: ListenerApi;
  /** Tracing: LangSmith-compatible ingestion, feedback, reads. */
  tracing: TracingService;
  /** Push and pull credentials of the platform's image registry. */
  registry: RegistryTokenService;
}

export function createServices(
  storage: ControlPlaneStorage,
  box: SecretBox,
  uploads: UploadSettings,
  tracing: TracingSettings,
  registrySettings?: RegistrySettings,
): Services {
  const watch = new RevisionWatch();
  const registry = new RegistryTokenService(storage, registrySettings);
  const deployments = new DeploymentService(storage, box);
  const integrations = new IntegrationService(storage, box, deployments);
  return {
    deployments,
    revisions: new RevisionService(storage, watch),
    uploads: new UploadService(storage, box, uploads),
    listeners: new ListenerService(storage),
    integrations,
    logs: new LogService(storage),
    listenerApi: new ListenerApi(storage, box, uploads.dir, watch, registry, integrations),
    tracing: createTracingService(storage.tracing, tracing),
    registry,
  };
}
