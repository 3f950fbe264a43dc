import { integrationAllows } from "./git-integrations.js";
import { BadRequestError } from "@berth/service-kit";
import { posix } from "node:path";
import { READ_ONLY_FIELDS, type SourceConfigInput, type SourceRevisionConfigInput } from "./inputs/deployment.js";
import type { IntegrationRecord, ListenerRecord, UploadRecord } from "../storage/types.js";
import { normalizeResourceSpec } from "./resource-spec.js";
import type { DeploymentSource, RevisionStatus } from "@berth/listener-protocol";

/**
 * The rules of the spec that a schema cannot express: which fields apply to
 * which source, what create requires, what PATCH may not change. Every
 * violation is a BadRequestError (400) naming the field.
 */

const BUILT: readonly DeploymentSource[] = ["repo_host", "internal_source"];

const SOURCE_CONFIG_SOURCES: Record<keyof SourceConfigInput, readonly DeploymentSource[]> = {
  integration_id: ["repo_host"],
  repo_url: ["repo_host"],
  deployment_type: ["repo_host"],
  build_on_push: ["repo_host"],
  custom_url: ["external_image"],
  resource_spec: ["external_image"],
  listener_id: ["external_image"],
  listener_config: ["external_image"],
  install_command: BUILT,
  build_command: BUILT,
};

const REVISION_CONFIG_SOURCES: Record<
  Exclude<keyof SourceRevisionConfigInput, "repo_commit_sha">,
  readonly DeploymentSource[]
> = {
  repo_ref: ["repo_host"],
  graph_config_path: BUILT,
  image_uri: ["external_image", "internal_image"],
  source_tarball_path: ["internal_source"],
};

/**
 * Where the hosted platform's rules differ: it also takes deployment_type for
 * the sources its CLI creates. Berth stores and shows it (no effect on local compute).
 */
const HOSTED_SOURCE_CONFIG_SOURCES: Partial<Record<keyof SourceConfigInput, readonly DeploymentSource[]>> = {
  deployment_type: ["repo_host", "internal_source", "internal_image"],
};

/** Fields of source_config fixed at creation (sending the current value again is accepted). */
const IMMUTABLE_SOURCE_CONFIG = ["integration_id", "repo_url", "deployment_type", "listener_id", "listener_config"] as const;

export const SOURCE_CONFIG_FIELDS = Object.keys(SOURCE_CONFIG_SOURCES);
export const SOURCE_REVISION_CONFIG_FIELDS = [...Object.keys(REVISION_CONFIG_SOURCES), "repo_commit_sha"];

const isSet = (value: unknown) => value !== undefined && value !== null;

/** The non-null fields of a partial object. */
export function setFields<T extends object>(input: T | null | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(input ?? {}).filter(([, value]) => isSet(value))) as Partial<T>;
}

export function refuseReadOnly(body: Record<string, unknown>, revisionConfig: Record<string, unknown> | null | undefined): void {
  for (const field of READ_ONLY_FIELDS) {
    if (isSet(body[field])) throw new BadRequestError(`${field} is read-only`);
  }
  if (isSet(revisionConfig?.repo_commit_sha)) throw new BadRequestError("source_revision_config.repo_commit_sha is read-only");
}

function describe(sources: readonly DeploymentSource[]): string {
  return sources.length === 1 ? `source ${sources[0]}` : `sources ${sources.join(" and ")}`;
}

/** Refuses fields given for a source they do not apply to (by the hosted platform's rules for a dialect request). */
export function refuseFieldsOfOtherSources(
  source: DeploymentSource,
  sourceConfig: Partial<SourceConfigInput>,
  revisionConfig: Partial<SourceRevisionConfigInput>,
  secretReferences: unknown,
  hosted: boolean,
): void {
  for (const [field, specSources] of Object.entries(SOURCE_CONFIG_SOURCES)) {
    const sources = (hosted && HOSTED_SOURCE_CONFIG_SOURCES[field as keyof SourceConfigInput]) || specSources;
    if (isSet(sourceConfig[field as keyof SourceConfigInput]) && !sources.includes(source)) {
      throw new BadRequestError(`source_config.${field} only applies to ${describe(sources)}, not ${source}`);
    }
  }
  for (const [field, sources] of Object.entries(REVISION_CONFIG_SOURCES)) {
    if (isSet(revisionConfig[field as keyof SourceRevisionConfigInput]) && !sources.includes(source)) {
      if (field === "graph_config_path")
        throw new BadRequestError(`source_revision_config.graph_config_path must be null for source ${source}`);
      throw new BadRequestError(`source_revision_config.${field} only applies to ${describe(sources)}, not ${source}`);
    }
  }
  if (isSet(secretReferences) && source !== "external_image") {
    throw new BadRequestError(`secret_references only applies to source external_image, not ${source}`);
  }
}

export function checkGraphConfigPath(path: string): void {
  const normalized = posix.normalize(path);
  if (
    path.startsWith("/") ||
    normalized.startsWith("..") ||
    normalized !== path.replace(/^\.\//, "") ||
    !path.endsWith(".json")
  ) {
    throw new BadRequestError(
      "source_revision_config.graph_config_path must be a relative path to a .json file inside the source",
    );
  }
}

/** Characters a shell would interpret, after the official CLI's rule (`&&` is fine, a lone `&` is not). */
const SHELL_CHARACTERS = /["`\\\n\r\t\0|;$<>]|(?<!&)&(?!&)/;

export function checkCommand(field: "install_command" | "build_command", command: string): void {
  if (SHELL_CHARACTERS.test(command.replaceAll("&&", ""))) {
    throw new BadRequestError(
      `source_config.${field} contains characters a shell would interpret (quotes, backslash, |, ;, $, <, >, a lone &, control characters)`,
    );
  }
}

export function checkBuildOnPush(buildOnPush: unknown, repoRef: unknown): void {
  if (buildOnPush === true && typeof repoRef === "string" && repoRef.startsWith("refs/tags/")) {
    throw new BadRequestError(
      "source_config.build_on_push cannot be enabled when source_revision_config.repo_ref is a tag (refs/tags/...)",
    );
  }
}

export function checkListener(
  listenerId: unknown,
  listenerConfig: { cluster_namespace?: string | null } | null | undefined,
  listener: ListenerRecord | undefined,
): void {
  if (!isSet(listenerId)) {
    if (isSet(listenerConfig)) throw new BadRequestError("source_config.listener_config needs source_config.listener_id");
    return;
  }
  if (!listener) throw new BadRequestError(`source_config.listener_id: listener ${listenerId} not found`);
  const namespace = listenerConfig?.cluster_namespace ?? null;
  if (listener.compute_type !== "cluster") {
    if (isSet(listenerConfig)) {
      throw new BadRequestError(
        `source_config.listener_config only applies to listeners of compute type cluster, not ${listener.compute_type}`,
      );
    }
    return;
  }
  if (namespace === null)
    throw new BadRequestError("source_config.listener_config.cluster_namespace is required for a cluster listener");
  const allowed = listener.compute_config.cluster_namespaces ?? [];
  if (!allowed.includes(namespace)) {
    throw new BadRequestError(
      `source_config.listener_config.cluster_namespace "${namespace}" is not a namespace listener ${listener.id} may deploy to`,
    );
  }
}

export function checkRepository(integrationId: unknown, repoUrl: unknown, integration: IntegrationRecord | undefined): void {
  if (!integration) throw new BadRequestError(`source_config.integration_id: integration ${integrationId} not found`);
  if (!integrationAllows(integration, String(repoUrl))) {
    throw new BadRequestError(`source_config.repo_url ${repoUrl} is not a repository of integration ${integration.id}`);
  }
}

/** A source_tarball_path is usable only when upload-url issued it for this deployment and the tarball arrived. */
export function checkTarballPath(path: string, deploymentId: string | undefined, upload: UploadRecord | undefined): void {
  if (!upload || upload.deployment_id !== deploymentId) {
    throw new BadRequestError(
      "source_revision_config.source_tarball_path must be an object path issued by upload-url for this deployment",
    );
  }
  if (!upload.uploaded_at)
    throw new BadRequestError(`source_revision_config.source_tarball_path: nothing has been uploaded to ${path} yet`);
}

/**
 * What create requires per source, beyond applicability. The hosted platform
 * creates an internal_source deployment without a config path: the PATCH that
 * brings the tarball brings it (checkSourceComplete).
 */
export function checkRequiredOnCreate(
  source: DeploymentSource,
  sourceConfig: Partial<SourceConfigInput>,
  revisionConfig: Partial<SourceRevisionConfigInput>,
  hosted: boolean,
): void {
  const require = (present: unknown, field: string) => {
    if (!isSet(present)) throw new BadRequestError(`${field} is required for source ${source}`);
  };
  if (BUILT.includes(source) && !(hosted && source === "internal_source")) {
    require(revisionConfig.graph_config_path, "source_revision_config.graph_config_path");
  }
  if (source === "repo_host") {
    require(sourceConfig.integration_id, "source_config.integration_id");
    require(sourceConfig.repo_url, "source_config.repo_url");
    require(revisionConfig.repo_ref, "source_revision_config.repo_ref");
  }
  if (source === "external_image") require(revisionConfig.image_uri, "source_revision_config.image_uri");
}

/** Resource spec and commands of a source_config request, validated and normalized. */
export function normalizeSourceConfigFields(sourceConfig: Partial<SourceConfigInput>): Record<string, unknown> {
  const fields: Record<string, unknown> = { ...sourceConfig };
  if (sourceConfig.resource_spec) fields.resource_spec = normalizeResourceSpec(sourceConfig.resource_spec, "resource_spec");
  if (sourceConfig.install_command) checkCommand("install_command", sourceConfig.install_command);
  if (sourceConfig.build_command) checkCommand("build_command", sourceConfig.build_command);
  return fields;
}

export function refuseImmutableChanges(current: Record<string, unknown>, requested: Partial<SourceConfigInput>): void {
  for (const field of IMMUTABLE_SOURCE_CONFIG) {
    const value = requested[field];
    if (isSet(value) && JSON.stringify(value) !== JSON.stringify(current[field])) {
      throw new BadRequestError(`source_config.${field} cannot be changed after creation`);
    }
  }
}

/** A revision that brings a tarball must say where its graph config is (a deployment created in the hosted dialect may have none yet). */
export function checkSourceComplete(source: DeploymentSource, revisionConfig: Record<string, unknown>): void {
  if (source === "internal_source" && isSet(revisionConfig.source_tarball_path) && !isSet(revisionConfig.graph_config_path)) {
    throw new BadRequestError(
      "source_revision_config.graph_config_path is required with the source tarball: this deployment was created without one",
    );
  }
}

/** The status and reason a new revision starts with: CREATING while it lacks what it deploys. */
export function initialRevisionStatus(
  source: DeploymentSource,
  revisionConfig: Record<string, unknown>,
): { status: RevisionStatus; message: string } {
  if (source === "internal_source" && !isSet(revisionConfig.source_tarball_path)) {
    const withPath = isSet(revisionConfig.graph_config_path) ? "" : " and source_revision_config.graph_config_path";
    return {
      status: "CREATING",
      message: `Waiting for the source tarball: request an upload URL, PUT the tarball, then PATCH source_revision_config.source_tarball_path${withPath}`,
    };
  }
  if (source === "internal_image" && !isSet(revisionConfig.image_uri)) {
    return { status: "CREATING", message: "Waiting for an image: PATCH source_revision_config.image_uri" };
  }
  return { status: "QUEUED", message: "Waiting for a listener to deploy it" };
}

/** Every field of an object type, null where not given. */
export function complete(fields: readonly string[], given: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(fields.map((field) => [field, given[field] ?? null]));
}
