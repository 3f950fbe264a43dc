import type { Logger } from "pino";
import type { SecretBox } from "../domain/secret-box.js";
import { AgentConnectionService } from "./agent-connections.js";
import { type AuthFlowSettings, AuthFlowService } from "./auth-flows.js";
import { AuthProviderService } from "./auth-providers.js";
import { AuthTokenService } from "./auth-tokens.js";
import type { ControlPlaneStorage } from "../storage/types.js";
import { DeploymentService } from "./deployments.js";
import { IntegrationService } from "./integrations.js";
import { ListenerApi } from "./listener-api.js";
import { ListenerService } from "./listeners.js";
import { LogService } from "./logs.js";
import { type RegistrySettings, RegistryTokenService } from "./registry-tokens.js";
import { RevisionEvents } from "./revision-events.js";
import { RevisionWatch } from "./revision-watch.js";
import { RevisionService } from "./revisions.js";
import { RunWebhookService } from "./run-webhooks.js";
import { UploadService, type UploadSettings } from "./uploads.js";
import { createTracingService, type TracingService, type TracingSettings } from "../tracing/service.js";

export interface Services {
  deployments: DeploymentService;
  revisions: RevisionService;
  uploads: UploadService;
  listeners: ListenerService;
  integrations: IntegrationService;
  /** The secret each deployment's run webhooks are signed with, for its owner. */
  runWebhooks: RunWebhookService;
  logs: LogService;
  listenerApi: ListenerApi;
  /** Revisions made and moved in this process, for whoever tells them (the CLI's terminal lines). */
  revisionEvents: RevisionEvents;
  /** Tracing: LangSmith-compatible ingestion, feedback, reads. */
  tracing: TracingService;
  /** Push and pull credentials of the platform's image registry. */
  registry: RegistryTokenService;
  /** The Auth Service: OAuth providers, consent flows, users' tokens, agent connections. */
  auth: {
    providers: AuthProviderService;
    flows: AuthFlowService;
    tokens: AuthTokenService;
    connections: AgentConnectionService;
  };
}

export function createServices(
  storage: ControlPlaneStorage,
  box: SecretBox,
  uploads: UploadSettings,
  tracing: TracingSettings,
  registrySettings: RegistrySettings | undefined,
  authSettings: AuthFlowSettings,
  /** Folders local git integrations may read (BERTH_LOCAL_GIT_ROOTS). */
  localGitRoots: readonly string[],
  logger: Logger,
): Services {
  const watch = new RevisionWatch();
  const revisionEvents = new RevisionEvents();
  const registry = new RegistryTokenService(storage, registrySettings);
  const deployments = new DeploymentService(storage, box, revisionEvents);
  const integrations = new IntegrationService(storage, box, deployments, localGitRoots);
  const logs = new LogService(storage, revisionEvents);
  const providers = new AuthProviderService(storage, box, { allowPrivate: authSettings.allowPrivate });
  const tokens = new AuthTokenService(storage, box, providers, logger.child({ component: "auth-service" }));
  return {
    deployments,
    revisions: new RevisionService(storage, watch, revisionEvents),
    uploads: new UploadService(storage, box, uploads),
    listeners: new ListenerService(storage),
    integrations,
    runWebhooks: new RunWebhookService(storage, box),
    logs,
    listenerApi: new ListenerApi(storage, box, uploads.dir, watch, registry, integrations, revisionEvents, logs),
    revisionEvents,
    tracing: createTracingService(storage.tracing, storage.deployments, tracing),
    registry,
    auth: {
      providers,
      flows: new AuthFlowService(storage, box, providers, tokens, authSettings),
      tokens,
      connections: new AgentConnectionService(storage),
    },
  };
}
