import type { Logger } from "pino";
import type { ControlPlaneSettings } from "../config/settings.js";
import type { SecretBox } from "../domain/secret-box.js";
import { AgentConnectionService } from "./agent-connections.js";
import { AuthFlowService } from "./auth-flows.js";
import { type ChangeFeed, InProcessChangeFeed } from "./change-feed.js";
import { AuthProviderService } from "./auth-providers.js";
import { AuthTokenService } from "./auth-tokens.js";
import type { ControlPlaneStorage } from "../storage/types.js";
import { DeploymentService } from "./deployments.js";
import { IntegrationService } from "./integrations.js";
import { ListenerApi } from "./listener-api.js";
import { ListenerService } from "./listeners.js";
import { PrometheusMetrics } from "./prometheus.js";
import { LogService } from "./logs.js";
import { DeploymentMetricsService } from "./deployment-metrics.js";
import { type RegistrySettings, RegistryTokenService } from "./registry-tokens.js";
import { RevisionService } from "./revisions.js";
import { RunWebhookService } from "./run-webhooks.js";
import { UploadService } from "./uploads.js";
import { createTracingService, type TracingService } from "../tracing/service.js";

export interface Services {
  deployments: DeploymentService;
  revisions: RevisionService;
  uploads: UploadService;
  listeners: ListenerService;
  integrations: IntegrationService;
  /** The secret each deployment's run webhooks are signed with, for its owner. */
  runWebhooks: RunWebhookService;
  logs: LogService;
  /** The deployments' metric series (charts of the dashboard). */
  deploymentMetrics: DeploymentMetricsService;
  listenerApi: ListenerApi;
  /** Tracing: LangSmith-compatible ingestion, feedback, reads. */
  tracing: TracingService;
  /** Push and pull credentials of the platform's image registry. */
  registry: RegistryTokenService;
  /** The control plane's own Prometheus metrics (GET /metrics). */
  prometheus: PrometheusMetrics;
  /** The Auth Service: OAuth providers, consent flows, users' tokens, agent connections. */
  auth: {
    providers: AuthProviderService;
    flows: AuthFlowService;
    tokens: AuthTokenService;
    connections: AgentConnectionService;
  };
}

export interface ServicesOptions {
  storage: ControlPlaneStorage;
  box: SecretBox;
  changes: ChangeFeed;
  settings: ControlPlaneSettings;
  /** Where uploaded tarballs are kept. */
  uploadsDir: string;
  /** The platform's image registry, when it runs. */
  registry?: RegistrySettings;
  logger: Logger;
}

export function createServices({ storage, box, changes, settings, uploadsDir, registry, logger }: ServicesOptions): Services {
  const uploads = { dir: uploadsDir, ttlSeconds: settings.uploadTtlSeconds, maxBytes: settings.uploadMaxBytes };
  const authFlows = { flowTtlMs: settings.authFlowSeconds * 1000, allowPrivate: settings.outboundAllowPrivate };
  const registryTokens = new RegistryTokenService(storage, registry);
  const deployments = new DeploymentService(storage, box, changes);
  const integrations = new IntegrationService(storage, box, deployments, settings.localGitRoots);
  const logs = new LogService(storage, changes);
  const deploymentMetrics = new DeploymentMetricsService(storage, settings.metricsRetentionSeconds);
  const providers = new AuthProviderService(storage, box, { allowPrivate: authFlows.allowPrivate });
  const tokens = new AuthTokenService(storage, box, providers, logger.child({ component: "auth-service" }));
  const prometheus = new PrometheusMetrics(storage, logger.child({ component: "metrics" }));
  return {
    deployments,
    revisions: new RevisionService(storage, prometheus.counting(changes)),
    uploads: new UploadService(storage, box, uploads),
    listeners: new ListenerService(storage, changes),
    integrations,
    runWebhooks: new RunWebhookService(storage, box),
    logs,
    listenerApi: new ListenerApi(
      storage,
      box,
      uploads.dir,
      registryTokens,
      integrations,
      prometheus.counting(changes),
      logs,
      deploymentMetrics,
    ),
    deploymentMetrics,
    tracing: createTracingService(storage.tracing, storage.deployments, { tokenTtlSeconds: settings.feedbackTokenTtlSeconds }),
    registry: registryTokens,
    prometheus,
    auth: {
      providers,
      flows: new AuthFlowService(storage, box, providers, tokens, authFlows),
      tokens,
      connections: new AgentConnectionService(storage),
    },
  };
}

/** The change feed: across the control-plane processes sharing a PostgreSQL database, else this process's. */
export async function openChangeFeed(databaseUrl: string | undefined, logger: Logger): Promise<ChangeFeed> {
  if (!databaseUrl) return new InProcessChangeFeed();
  const { PostgresChangeFeed } = await import("./postgres-change-feed.js");
  return PostgresChangeFeed.connect(databaseUrl, logger.child({ component: "change-feed" }));
}
