import { BadRequestError } from "@berth/service-kit";
import type { DeploymentCreateInput, DeploymentPatchInput, SourceRevisionConfigInput } from "./inputs/deployment.js";
import { HOSTED_CONFIG_PATH, inHostedNames, isHostedSource, SPEC_ONLY_SOURCES, toSpecSource } from "./hosted-names.js";
import type { DeploymentSource } from "@berth/listener-protocol";

/**
 * Requests in the hosted platform's dialect (what the official deploy CLI
 * sends), read into the spec's names. Which request is a dialect request:
 *
 * - one that uses a name only the hosted platform has (source or
 *   revision_source `github` / `internal_docker`, `langgraph_config_path`);
 * - a create that uses only the names both share and sets
 *   `source_config.deployment_type` on an `internal_source` deployment, which
 *   only the hosted platform accepts: the CLI's create for a remote build.
 *
 * Everything else is a spec request and keeps the spec's rules exactly. A
 * request mixing names only the spec has with names only the hosted platform
 * has is refused.
 */

type HostedRevisionConfig = SourceRevisionConfigInput & { [HOSTED_CONFIG_PATH]?: string | null };

export type SpecCreate = Omit<DeploymentCreateInput, "source" | "source_revision_config"> & {
  source: DeploymentSource;
  source_revision_config: SourceRevisionConfigInput;
};

export type SpecPatch = Omit<DeploymentPatchInput, "revision_source" | "source_revision_config"> & {
  revision_source?: DeploymentSource | null;
  source_revision_config?: SourceRevisionConfigInput | null;
};

export interface ReadRequest<T> {
  body: T;
  /** The request spoke the hosted dialect: the hosted platform's rules apply, and 400s name its fields. */
  hosted: boolean;
}

const isSet = (value: unknown) => value !== undefined && value !== null;

class NamesUsed {
  readonly hosted: string[] = [];
  readonly specOnly: string[] = [];

  source(field: string, value: unknown): void {
    if (isHostedSource(value)) this.hosted.push(`${field} ${value}`);
    else if (typeof value === "string" && SPEC_ONLY_SOURCES.includes(value)) this.specOnly.push(`${field} ${value}`);
  }

  revisionConfig(config: HostedRevisionConfig | null | undefined): void {
    if (isSet(config?.[HOSTED_CONFIG_PATH])) this.hosted.push(`source_revision_config.${HOSTED_CONFIG_PATH}`);
    if (isSet(config?.graph_config_path)) this.specOnly.push("source_revision_config.graph_config_path");
  }

  /** Whether a name only the hosted platform has was used (400 when the spec's own names are used too). */
  hostedOnly(): boolean {
    if (this.hosted.length > 0 && this.specOnly.length > 0) {
      throw new BadRequestError(
        `The request mixes the hosted platform's names (${this.hosted.join(", ")}) with the spec's (${this.specOnly.join(", ")}): use one or the other`,
      );
    }
    return this.hosted.length > 0;
  }
}

function specRevisionConfig(config: HostedRevisionConfig): SourceRevisionConfigInput {
  const { [HOSTED_CONFIG_PATH]: hostedPath, ...spec } = config;
  return isSet(hostedPath) ? { ...spec, graph_config_path: hostedPath } : spec;
}

export function readCreate(body: DeploymentCreateInput): ReadRequest<SpecCreate> {
  const names = new NamesUsed();
  names.source("source", body.source);
  names.revisionConfig(body.source_revision_config);
  const hosted =
    names.hostedOnly() ||
    (names.specOnly.length === 0 && body.source === "internal_source" && isSet(body.source_config.deployment_type));
  return {
    body: { ...body, source: toSpecSource(body.source), source_revision_config: specRevisionConfig(body.source_revision_config) },
    hosted,
  };
}

export function readPatch(body: DeploymentPatchInput): ReadRequest<SpecPatch> {
  const names = new NamesUsed();
  names.source("source", body.source);
  names.source("revision_source", body.revision_source);
  names.revisionConfig(body.source_revision_config);
  const hosted = names.hostedOnly();
  return {
    body: {
      ...body,
      source: toSpecSource(body.source),
      revision_source: body.revision_source ? toSpecSource(body.revision_source) : body.revision_source,
      source_revision_config: body.source_revision_config
        ? specRevisionConfig(body.source_revision_config)
        : body.source_revision_config,
    },
    hosted,
  };
}

/** Runs a request's rules; for a dialect request a refusal names the fields as the request did. */
export async function answerInItsNames<T>(hosted: boolean, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (hosted && error instanceof BadRequestError) throw new BadRequestError(inHostedNames(error.message));
    throw error;
  }
}
