import { EMPTY_RESOURCE_SPEC, type ResourceSpec, type RevisionSpec } from "@berth/listener-protocol";

/**
 * A revision's spec as the control plane makes it, from the fields a test
 * sets (an internal_source revision that sets nothing else). `scale` is not
 * derived from `resources`: a test of scaling sets both.
 */
export function specWith(
  fields: Omit<Partial<RevisionSpec>, "resources"> & { resources?: Partial<ResourceSpec> } = {},
): RevisionSpec {
  return {
    source: "internal_source",
    deployment_type: null,
    build: { graph_config_path: null, install_command: null, build_command: null },
    image_uri: null,
    repository: null,
    repo_commit_sha: null,
    build_on_push: false,
    scale: { replicas: 1, max_replicas: 1, workers: 1, max_workers: 1 },
    custom_url: null,
    secret_references: [],
    cluster_namespace: null,
    ...fields,
    resources: { ...EMPTY_RESOURCE_SPEC, ...fields.resources },
  };
}
