// Request bodies for creating deployments of each source, and unique names for them.
import { randomBytes } from "node:crypto";
import type { Secret, SourceConfig } from "./api-types.js";

let counter = 0;
/** A deployment name unique within the run (valid: letters, digits, `-`). */
export function uniqueName(prefix = "d"): string {
  counter += 1;
  return `${prefix}-${counter}-${randomBytes(3).toString("hex")}`;
}

export const IMAGE = "registry.local/agent:1";

export function externalImageBody(name: string, extra: { source_config?: SourceConfig; secrets?: Secret[] } = {}) {
  return {
    name,
    source: "external_image",
    source_config: extra.source_config ?? {},
    source_revision_config: { image_uri: IMAGE },
    secrets: extra.secrets ?? [{ name: "OPENAI_API_KEY", value: "sk-1" }],
  };
}

export function internalSourceBody(name: string) {
  return {
    name,
    source: "internal_source",
    source_config: {},
    source_revision_config: { graph_config_path: "langgraph.json" },
    secrets: [],
  };
}

export function internalImageBody(name: string, imageUri: string | null = IMAGE) {
  return {
    name,
    source: "internal_image",
    source_config: {},
    source_revision_config: imageUri === null ? {} : { image_uri: imageUri },
    secrets: [],
  };
}

export function repoHostBody(name: string, integrationId: string, repoUrl: string, extra: SourceConfig = {}) {
  return {
    name,
    source: "repo_host",
    source_config: { integration_id: integrationId, repo_url: repoUrl, ...extra },
    source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
    secrets: [],
  };
}
