import { z } from "zod";
import { HOSTED_CONFIG_PATH, HOSTED_SOURCES } from "../hosted-names.js";
import { DEPLOYMENT_SOURCES, DEPLOYMENT_STATUSES, DEPLOYMENT_TYPES, REVISION_STATUSES } from "@berth/listener-protocol";
import { ImageReference, ReadOnly, Text, Uuid } from "./primitives.js";
import { ResourceSpec } from "./resource-spec.js";

export const DeploymentSource = z.enum(DEPLOYMENT_SOURCES);
export const DeploymentStatus = z.enum(DEPLOYMENT_STATUSES);
export const RevisionStatus = z.enum(REVISION_STATUSES);
/** A source as a request may name it: the spec's names, or the hosted platform's `github` and `internal_docker`. */
export const RequestSource = z
  .enum([...DEPLOYMENT_SOURCES, ...HOSTED_SOURCES])
  .describe("github and internal_docker are the hosted platform's names of repo_host and internal_image");

export const DeploymentName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, {
  message: "must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit",
});

export const ListenerConfig = z.strictObject({
  cluster_namespace: Text.min(1).nullish(),
});

export const SourceConfigRequest = z.strictObject({
  integration_id: Uuid.nullish(),
  repo_url: Text.min(1).nullish(),
  deployment_type: z.enum(DEPLOYMENT_TYPES).nullish(),
  build_on_push: z.boolean().nullish(),
  custom_url: z.url({ protocol: /^https?$/, message: "must be an http(s) URL" }).nullish(),
  resource_spec: ResourceSpec.nullish(),
  listener_id: Uuid.nullish(),
  listener_config: ListenerConfig.nullish(),
  install_command: Text.min(1).nullish(),
  build_command: Text.min(1).nullish(),
});
export type SourceConfigInput = z.infer<typeof SourceConfigRequest>;

export const SourceRevisionConfigRequest = z.strictObject({
  repo_ref: Text.min(1).nullish(),
  graph_config_path: Text.min(1).nullish(),
  image_uri: ImageReference.nullish(),
  source_tarball_path: Text.min(1).nullish(),
  repo_commit_sha: ReadOnly,
});
export type SourceRevisionConfigInput = z.infer<typeof SourceRevisionConfigRequest>;

/** source_revision_config as requests carry it: the spec's fields, and the hosted platform's name of graph_config_path. */
const SourceRevisionConfigBody = SourceRevisionConfigRequest.extend({
  [HOSTED_CONFIG_PATH]: Text.min(1).nullish().describe("The hosted platform's name of graph_config_path (send one of them)"),
});

export const Secret = z.strictObject({ name: Text.min(1), value: Text });
export type SecretInput = z.infer<typeof Secret>;

export const SecretReference = z.strictObject({
  name: Text.min(1),
  secret_name: Text.min(1),
  secret_key: Text.min(1),
});

/** The fields the server sets; a request carrying one is refused with a 400 naming it. */
export const READ_ONLY_FIELDS = [
  "id",
  "tenant_id",
  "created_at",
  "updated_at",
  "status",
  "latest_revision_id",
  "active_revision_id",
  "image_version",
] as const;
const readOnlyFields = Object.fromEntries(READ_ONLY_FIELDS.map((field) => [field, ReadOnly])) as Record<
  (typeof READ_ONLY_FIELDS)[number],
  typeof ReadOnly
>;

export const DeploymentCreateRequest = z.strictObject({
  name: DeploymentName,
  source: RequestSource,
  source_config: SourceConfigRequest,
  source_revision_config: SourceRevisionConfigBody,
  secrets: z.array(Secret),
  secret_references: z.array(SecretReference).nullish(),
  ...readOnlyFields,
});
export type DeploymentCreateInput = z.infer<typeof DeploymentCreateRequest>;

export const DeploymentPatchRequest = z.strictObject({
  name: z.unknown().optional().describe("Immutable: refused (400) unless it is the current name"),
  source: z.unknown().optional().describe("Immutable: refused (400) unless it is the current source"),
  revision_source: RequestSource.nullish().describe("Accepted for CLI compatibility; must be the deployment's source"),
  source_config: SourceConfigRequest.nullish(),
  source_revision_config: SourceRevisionConfigBody.nullish(),
  secrets: z.array(Secret).nullish(),
  secret_references: z.array(SecretReference).nullish(),
  resource_spec: ResourceSpec.nullish().describe("The same as source_config.resource_spec"),
  tracked_packages: z.array(Text).nullish().describe("Accepted for CLI compatibility; ignored"),
  ...readOnlyFields,
});
export type DeploymentPatchInput = z.infer<typeof DeploymentPatchRequest>;
