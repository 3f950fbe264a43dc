import type { V1ObjectMeta } from "@kubernetes/client-node";
import {
  type ClusterComponent,
  LABEL_COMPONENT,
  LABEL_DEPLOYMENT,
  LABEL_MANAGED_BY,
  LABEL_NAME,
  LABEL_REVISION,
  MANAGED_BY_BERTH,
} from "./cluster-revision.js";
import type { RenderContext } from "./render-spec.js";

/** A text as a valid label value: at most 63 characters, starting and ending with a letter or digit. */
export function labelValue(text: string): string {
  return text
    .replace(/[^A-Za-z0-9_.-]/g, "-")
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
}

/**
 * The labels a workload selects its pods by. Selectors cannot change once a
 * Deployment exists, so they carry nothing that changes between revisions.
 */
export function selectorOf(context: RenderContext, component: ClusterComponent): Record<string, string> {
  return { [LABEL_DEPLOYMENT]: labelValue(context.input.deploymentId), [LABEL_COMPONENT]: component };
}

/** resource_spec.labels, then the ownership labels over them (a user's label cannot disown an object). */
function labelsOf(context: RenderContext, component: ClusterComponent, withRevision: boolean): Record<string, string> {
  const { input } = context;
  return {
    ...context.labels,
    [LABEL_MANAGED_BY]: MANAGED_BY_BERTH,
    [LABEL_NAME]: labelValue(input.deploymentName),
    ...selectorOf(context, component),
    ...(withRevision ? { [LABEL_REVISION]: labelValue(input.revisionId) } : {}),
  };
}

/** An object's metadata: its name, the namespace, the ownership labels, resource_spec's labels and annotations. */
export function metadataOf(context: RenderContext, component: ClusterComponent, name: string): V1ObjectMeta {
  const annotations = context.annotations;
  return {
    name,
    namespace: context.input.namespace,
    labels: labelsOf(context, component, true),
    ...(Object.keys(annotations).length > 0 ? { annotations: { ...annotations } } : {}),
  };
}

/**
 * A pod template's metadata. The revision label makes every revision roll the
 * API and worker pods (their env Secret keeps its name); the database and
 * cache pods leave it out, so a new revision does not restart them.
 */
export function podMetadataOf(context: RenderContext, component: ClusterComponent, withRevision: boolean): V1ObjectMeta {
  const annotations = context.annotations;
  return {
    labels: labelsOf(context, component, withRevision),
    ...(Object.keys(annotations).length > 0 ? { annotations: { ...annotations } } : {}),
  };
}
