import { dumpYaml, type KubernetesObject } from "@kubernetes/client-node";
import type { ClusterRevision } from "./cluster-revision.js";
import { podExtrasOf } from "./render-companions.js";
import { renderCache, renderDatabase } from "./render-data.js";
import { renderNetworkPolicy } from "./render-network.js";
import { renderApiService, renderServerDeployment } from "./render-pods.js";
import { renderScaling } from "./render-scaling.js";
import { renderCredentialsSecret, renderEnvSecret } from "./render-secrets.js";
import { contextOf } from "./render-spec.js";

/**
 * Every Kubernetes object a revision needs, in the order to apply them: the
 * Secrets the pods read, the NetworkPolicy (before any pod of the deployment
 * runs), the database and cache (Services first, so their
 * names resolve when the servers start), the servers, their Service, then
 * what scales them. Pure: the same input renders the same objects, and a
 * resource_spec of the wrong shape throws a DeployError naming the field.
 */
export function renderRevision(input: ClusterRevision): KubernetesObject[] {
  const context = contextOf(input);
  const extras = podExtrasOf(input.resourceSpec);
  return [
    renderEnvSecret(context),
    renderCredentialsSecret(context),
    renderNetworkPolicy(context),
    ...(input.externalDatabaseUrl === undefined ? renderDatabase(context) : []),
    ...renderCache(context),
    renderServerDeployment(context, extras, "api"),
    renderServerDeployment(context, extras, "queue"),
    renderApiService(context),
    ...renderScaling(context),
  ];
}

/** The objects as one multi-document YAML stream (what `kubectl apply -f -` reads). */
export function toYaml(objects: KubernetesObject[]): string {
  return objects.map((object) => dumpYaml(object)).join("---\n");
}
