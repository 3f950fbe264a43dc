import type { KubernetesObject, V1StatefulSet } from "@kubernetes/client-node";
import type { ClusterConnection } from "./cluster-connection.js";

/** A kind of object Berth renders for a deployment. */
export interface BerthKind {
  apiVersion: string;
  kind: string;
  /** Its API group may not be installed (a CRD): a 404 while discovering or listing it means "none". */
  optional?: boolean;
}

/** Every kind Berth renders, in the order they are deleted: scalers first, so nothing scales a dying workload back up. */
export const BERTH_KINDS: readonly BerthKind[] = [
  { apiVersion: "keda.sh/v1alpha1", kind: "ScaledObject", optional: true },
  { apiVersion: "keda.sh/v1alpha1", kind: "TriggerAuthentication", optional: true },
  { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler" },
  { apiVersion: "apps/v1", kind: "Deployment" },
  { apiVersion: "apps/v1", kind: "StatefulSet" },
  // After the workloads: their pods are never without it.
  { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy" },
  { apiVersion: "v1", kind: "Service" },
  { apiVersion: "v1", kind: "Secret" },
];

/**
 * Selects a deployment's objects. managed-by keeps out objects others derive from
 * Berth's and label alike (KEDA copies a ScaledObject's labels onto the HPA it makes).
 */
export function deploymentSelector(deploymentId: string): string {
  return `app.kubernetes.io/managed-by=berth,berth.dev/deployment=${deploymentId}`;
}

/** The HTTP status of a failed API call, when it got that far. */
export function apiStatusCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

/** The API server's own message (its Status object) rather than the client's dump of headers and body. */
export function apiErrorMessage(error: unknown): string {
  const body = (error as { body?: unknown } | null)?.body;
  if (typeof body === "string") {
    try {
      const status = JSON.parse(body) as { message?: unknown };
      if (typeof status.message === "string") return status.message;
    } catch {
      if (body.trim()) return body.trim();
    }
  }
  return error instanceof Error ? error.message : String(error);
}

/** Names an object in messages and results: `Deployment/berth-x-api`. */
export function describeObject(object: KubernetesObject): string {
  return `${object.kind}/${object.metadata?.name}`;
}

/** The objects of one kind carrying the selector, as addressable headers (list items lack apiVersion and kind); null when the kind is optional and not installed. */
export async function listLabelled(
  connection: ClusterConnection,
  namespace: string,
  kind: BerthKind,
  selector: string,
): Promise<KubernetesObject[] | null> {
  try {
    const list = await connection.objects.list(
      kind.apiVersion,
      kind.kind,
      namespace,
      undefined,
      undefined,
      undefined,
      undefined,
      selector,
    );
    return list.items.map((item) => ({ ...item, apiVersion: kind.apiVersion, kind: kind.kind }));
  } catch (error) {
    // A missing group fails discovery with 404; a group without the kind fails with "Unrecognized API version and kind".
    const missing =
      apiStatusCode(error) === 404 || (error instanceof Error && error.message.startsWith("Unrecognized API version"));
    if (kind.optional && missing) return null;
    throw new Error(`Could not list ${kind.kind} objects in ${namespace}: ${apiErrorMessage(error)}`, { cause: error });
  }
}

/** Deletes one object, its dependents (ReplicaSets, pods) in the background; false when it was already gone. */
export async function deleteObject(connection: ClusterConnection, object: KubernetesObject): Promise<boolean> {
  const header = {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: { name: object.metadata?.name, namespace: object.metadata?.namespace },
  };
  try {
    await connection.objects.delete(header, undefined, undefined, undefined, undefined, "Background");
    return true;
  } catch (error) {
    if (apiStatusCode(error) === 404) return false;
    throw new Error(`Could not delete ${describeObject(object)}: ${apiErrorMessage(error)}`, { cause: error });
  }
}

/**
 * Deletes every object of a deployment, then the volumes of its StatefulSets
 * (their claims outlive them by design). Idempotent: what is already gone is
 * skipped. Returns what it deleted (`Kind/name`), for the deploy log.
 */
export async function deleteDeploymentObjects(
  connection: ClusterConnection,
  namespace: string,
  deploymentId: string,
): Promise<string[]> {
  const selector = deploymentSelector(deploymentId);
  const deleted: string[] = [];
  // A claim is named <template>-<statefulset>-<ordinal>; its labels are the template's, which may lack Berth's.
  const claimPrefixes: string[] = [];
  for (const kind of BERTH_KINDS) {
    const objects = await listLabelled(connection, namespace, kind, selector);
    for (const object of objects ?? []) {
      if (kind.kind === "StatefulSet") {
        const statefulSet = object as V1StatefulSet;
        for (const template of statefulSet.spec?.volumeClaimTemplates ?? []) {
          claimPrefixes.push(`${template.metadata?.name}-${statefulSet.metadata?.name}-`);
        }
      }
      if (await deleteObject(connection, object)) deleted.push(describeObject(object));
    }
  }
  const claims = await connection.core.listNamespacedPersistentVolumeClaim({ namespace });
  for (const claim of claims.items) {
    const name = claim.metadata?.name ?? "";
    const labels = claim.metadata?.labels ?? {};
    const labelled = labels["app.kubernetes.io/managed-by"] === "berth" && labels["berth.dev/deployment"] === deploymentId;
    const ofStatefulSet = claimPrefixes.some((prefix) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)));
    if (!labelled && !ofStatefulSet) continue;
    const object = { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name, namespace } };
    if (await deleteObject(connection, object)) deleted.push(describeObject(object));
  }
  return deleted;
}
