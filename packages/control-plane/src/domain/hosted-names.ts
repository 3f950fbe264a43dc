import type { DeploymentSource } from "@berth/listener-protocol";

/**
 * The hosted platform's names for what the spec calls otherwise. The spec is a
 * renamed view of the hosted API, and the official deploy CLI speaks the
 * hosted names (docs/control-plane.md, "The hosted dialect").
 */
export const HOSTED_SOURCES = ["github", "internal_docker"] as const;
export type HostedSource = (typeof HOSTED_SOURCES)[number];

const SPEC_SOURCE_OF: Record<HostedSource, DeploymentSource> = { github: "repo_host", internal_docker: "internal_image" };

/** Source values only the spec uses: the hosted platform names them differently (`external_docker` is not accepted). */
export const SPEC_ONLY_SOURCES: readonly string[] = ["repo_host", "internal_image", "external_image"];

export const HOSTED_CONFIG_PATH = "langgraph_config_path";

export const isHostedSource = (value: unknown): value is HostedSource => HOSTED_SOURCES.includes(value as HostedSource);

export function toSpecSource(value: DeploymentSource | HostedSource): DeploymentSource;
export function toSpecSource(value: unknown): unknown;
export function toSpecSource(value: unknown): unknown {
  return isHostedSource(value) ? SPEC_SOURCE_OF[value] : value;
}

const SPEC_TO_HOSTED: [RegExp, string][] = [
  [/\bgraph_config_path\b/g, HOSTED_CONFIG_PATH],
  [/\brepo_host\b/g, "github"],
  [/\binternal_image\b/g, "internal_docker"],
];

/** A rule's message in the names a hosted-dialect request used. */
export function inHostedNames(message: string): string {
  return SPEC_TO_HOSTED.reduce((text, [spec, hosted]) => text.replace(spec, hosted), message);
}

/**
 * A log level filter as Berth stores levels (`info`, `warn`, `error`): the
 * official CLI sends the hosted platform's upper-case names (`ERROR`, `WARNING`).
 */
export function toBerthLogLevel(level: string): string {
  const lower = level.toLowerCase();
  if (lower === "warning") return "warn";
  if (lower === "critical" || lower === "fatal") return "error";
  return lower;
}
