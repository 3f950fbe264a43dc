import { z } from "zod";
import { DeploymentSource, DeploymentStatus, RevisionStatus, SecretReference } from "../../domain/inputs/deployment.js";
import { CONDITION_STATUSES, DEPLOYMENT_TYPES } from "@berth/listener-protocol";
import { toBerthLogLevel } from "../../domain/hosted-names.js";
import { CONDITION_TYPES } from "../../domain/status-conditions.js";
import { csvList, Page, PageQuery, QueryBoolean, Text, Timestamp, Uuid } from "./common.js";

export * from "../../domain/inputs/deployment.js";

const SourceConfig = z.object({
  integration_id: z.string().nullable(),
  repo_url: z.string().nullable(),
  deployment_type: z.string().nullable(),
  build_on_push: z.boolean().nullable(),
  custom_url: z.string().nullable(),
  resource_spec: z.record(z.string(), z.unknown()).nullable(),
  listener_id: z.string().nullable(),
  listener_config: z.object({ cluster_namespace: z.string().nullable() }).nullable(),
  install_command: z.string().nullable(),
  build_command: z.string().nullable(),
});

const SourceRevisionConfig = z.object({
  repo_ref: z.string().nullable(),
  graph_config_path: z.string().nullable(),
  image_uri: z.string().nullable(),
  source_tarball_path: z.string().nullable(),
  repo_commit_sha: z.string().nullable(),
});

/** An extension of the spec: one aspect of a revision's or deployment's state, Kubernetes style. */
export const Condition = z.object({
  type: z.enum(CONDITION_TYPES).describe("A revision has each; a deployment has Serving and Healthy"),
  status: z.enum(CONDITION_STATUSES),
  reason: z.string().describe("Why, as a CamelCase word (Serving, Replaced, BuildFailed, HealthCheckPassed, …)"),
  message: z.string(),
  last_transition_time: Timestamp.describe("When `status` last changed"),
  observed_generation: z.int().describe("The revision number it was computed for (a deployment's: its latest revision's)"),
});

const Conditions = z.array(Condition).describe("Extension: the state as conditions; `status` stays the spec's enum");

export const Deployment = z.object({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string(),
  source: DeploymentSource,
  source_config: SourceConfig,
  source_revision_config: SourceRevisionConfig,
  secrets: z.array(z.object({ name: z.string(), value: z.string().describe('Always "********"') })),
  secret_references: z.array(SecretReference).nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
  status: DeploymentStatus,
  latest_revision_id: z.string().nullable(),
  active_revision_id: z.string().nullable(),
  image_version: z.string().nullable(),
  conditions: Conditions,
});

export const Revision = z.object({
  id: z.string(),
  deployment_id: z.string(),
  status: RevisionStatus,
  status_message: z.string(),
  source: DeploymentSource,
  source_revision_config: SourceRevisionConfig,
  image_digest: z
    .string()
    .nullable()
    .describe("The content id (`sha256:…`) of the image the revision ran; null until a container listener deployed it"),
  created_at: Timestamp,
  updated_at: Timestamp,
  conditions: Conditions,
});

export const DeploymentIdParams = z.object({ deployment_id: Uuid });
export const RevisionIdParams = z.object({ deployment_id: Uuid, revision_id: Uuid });

export const DeploymentListQuery = z.object({
  ...PageQuery,
  name_contains: Text.optional(),
  status: csvList(DeploymentStatus).optional(),
  deployment_ids: csvList(Uuid).optional(),
  deployment_type: z.enum(DEPLOYMENT_TYPES).optional(),
});

export const RevisionListQuery = z.object({ ...PageQuery, status: csvList(RevisionStatus).optional() });

export const DeleteQuery = z.object({ delete_tracing_project: QueryBoolean.optional() });

export const BulkDeleteQuery = z.object({ deployment_ids: csvList(Uuid).pipe(z.array(Uuid).min(1).max(100)).optional() });
export const BulkDeleteBody = z.strictObject({ deployment_ids: z.array(Uuid).min(1).max(100) });

export const BulkDeleteResult = z.object({
  results: z.array(z.object({ deployment_id: z.string(), status: z.int(), detail: z.string() })),
});

export const DeploymentPage = Page(Deployment);
export const RevisionPage = Page(Revision);

export const UploadUrl = z.object({ upload_url: z.string(), object_path: z.string(), expires_at: Timestamp });

export const RevisionEvent = z.object({
  at: Timestamp.describe("When it happened"),
  status: RevisionStatus.describe("The revision's status after it (a move's target; unchanged by other events)"),
  message: z.string(),
  type: z.enum(["Normal", "Warning"]).describe("Warning: a failure"),
  reason: z
    .string()
    .describe("CamelCase: a move's is its status (Building, BuildFailed); others say what happened (ServerRestarted)"),
});

/** ISO date-time or epoch milliseconds (the official CLI sends either). */
const TimeBound = z
  .union([z.iso.datetime({ offset: true }), z.int().min(0)])
  .transform((value) => (typeof value === "number" ? new Date(value).toISOString() : new Date(value).toISOString()));

export const LogQueryBody = z.strictObject({
  order: z.enum(["asc", "desc"]).default("desc"),
  limit: z.int().min(1).max(1000).default(100),
  offset: z.int().min(0).default(0),
  level: Text.min(1)
    .transform(toBerthLogLevel)
    .optional()
    .describe("info, warn or error (any case; WARNING and CRITICAL as the hosted platform names them)"),
  query: Text.min(1).optional(),
  start_time: TimeBound.optional(),
  end_time: TimeBound.optional(),
});

export const LogPage = z.object({
  logs: z.array(z.object({ id: z.string(), timestamp: Timestamp, level: z.string(), message: z.string() })),
  next_offset: z.int().nullable().describe("The offset of the next page; null when this one was the last"),
});

export const LogStreamQuery = z.object({
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe("How many lines the client has: the stream starts after them (a Last-Event-ID header wins over it)"),
});

export const ProjectIdParams = z.object({ deployment_id: Uuid });
export const ProjectRevisionParams = z.object({ deployment_id: Uuid, revision_id: Uuid });
