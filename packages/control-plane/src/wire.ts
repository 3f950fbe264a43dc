// The control plane's API as TypeScript types, inferred from the zod schemas its routes validate and answer with, so that
// the dashboard, the CLI and the tests read one definition. Types only (`@berth/control-plane/wire`): importing them
// with `import type` brings nothing of the server into a bundle.
import type { z } from "zod";
import type {
  BulkDeleteResult as BulkDeleteResultSchema,
  Condition as ConditionSchema,
  DeploymentPage,
  Deployment as DeploymentSchema,
  LogPage as LogPageSchema,
  RevisionEvent as RevisionEventSchema,
  Revision as RevisionSchema,
  Secret as SecretSchema,
  SourceConfigRequest,
  SourceRevisionConfigRequest,
  UploadUrl as UploadUrlSchema,
} from "./http/schemas/deployments.js";
import type { DeploymentMetrics as DeploymentMetricsSchema } from "./http/schemas/deployment-metrics.js";
import type { ServerInfo as ServerInfoSchema } from "./http/schemas/info.js";
import type { Integration as IntegrationSchema, Repository as RepositorySchema } from "./http/schemas/integrations.js";
import type { Listener as ListenerSchema } from "./http/schemas/listeners.js";
import type {
  Feedback as FeedbackSchema,
  Run as TracedRunSchema,
  SpanPage as SpanPageSchema,
  Span as SpanSchema,
} from "./tracing/schemas.js";

// Answers

export type Deployment = z.infer<typeof DeploymentSchema>;
export type Revision = z.infer<typeof RevisionSchema>;
/** `{resources, offset}`: a page of any list, and the offset of the next one. */
export type Page<T> = Omit<z.infer<typeof DeploymentPage>, "resources"> & { resources: T[] };
export type RevisionEvent = z.infer<typeof RevisionEventSchema>;
/** An extension of the spec: one aspect of a revision's or deployment's state (Built, Serving, Healthy, Replaced). */
export type Condition = z.infer<typeof ConditionSchema>;
/** `GET /info`: the version of the Berth serving the API. */
export type ServerInfo = z.infer<typeof ServerInfoSchema>;
export type LogLine = z.infer<typeof LogPageSchema>["logs"][number];
export type UploadUrl = z.infer<typeof UploadUrlSchema>;
export type BulkDeleteResult = z.infer<typeof BulkDeleteResultSchema>;
export type Listener = z.infer<typeof ListenerSchema>;
export type Integration = z.infer<typeof IntegrationSchema>;
export type Repository = z.infer<typeof RepositorySchema>;
/** `GET /v2/deployments/{id}/metrics`: a deployment's series over the last hour or day. */
export type DeploymentMetrics = z.infer<typeof DeploymentMetricsSchema>;
export type MetricsWindow = DeploymentMetrics["window"];
/** A run of the tracing service (`GET /api/v1/runs/{id}`, a project's run list). */
export type TracedRun = z.infer<typeof TracedRunSchema>;
/** A run of a trace without its inputs and outputs (`GET /api/v1/runs/{id}/spans`). */
export type Span = z.infer<typeof SpanSchema>;
export type SpanPage = z.infer<typeof SpanPageSchema>;
export type Feedback = z.infer<typeof FeedbackSchema>;

// Parts of requests, as a client writes them (before defaults and transforms)

export type Secret = z.input<typeof SecretSchema>;
export type SourceConfig = z.input<typeof SourceConfigRequest>;
export type SourceRevisionConfig = z.input<typeof SourceRevisionConfigRequest>;
