import { type KubernetesObject, PatchStrategy } from "@kubernetes/client-node";
import type { ClusterConnection } from "./cluster-connection.js";
import {
  BERTH_KINDS,
  type BerthKind,
  apiErrorMessage,
  deleteObject,
  deploymentSelector,
  describeObject,
  listLabelled,
} from "./delete-objects.js";

const DEPLOYMENT_LABEL = "berth.dev/deployment";

export interface ApplyObjectsOptions {
  /** The field manager of the server-side apply: Berth owns every field it sets, and only those. */
  fieldManager?: "berth";
}

/**
 * Server-side applies a deployment's objects in the given order (so Secrets and
 * Services exist before the workloads that use them), forcing ownership of the
 * fields Berth sets; then deletes the deployment's objects the new set no longer
 * has (an HPA no longer wanted). Every object must be namespaced and labelled
 * with the same berth.dev/deployment.
 */
export async function applyObjects(
  connection: ClusterConnection,
  objects: readonly KubernetesObject[],
  options: ApplyObjectsOptions = {},
): Promise<void> {
  const deploymentId = checkObjects(objects);
  const fieldManager = options.fieldManager ?? "berth";
  for (const object of objects) {
    try {
      await connection.objects.patch(object, undefined, undefined, fieldManager, true, PatchStrategy.ServerSideApply);
    } catch (error) {
      throw new Error(`Could not apply ${describeObject(object)} in ${object.metadata?.namespace}: ${apiErrorMessage(error)}`, {
        cause: error,
      });
    }
  }
  await deleteStaleObjects(connection, objects, deploymentId);
}

/** The deployment the objects belong to; throws when one cannot be addressed or belongs elsewhere. */
function checkObjects(objects: readonly KubernetesObject[]): string {
  const ids = new Set<string>();
  for (const object of objects) {
    const { name, namespace, labels } = object.metadata ?? {};
    // The client would fill a missing namespace from the kubeconfig's context: an object landing there by accident is worse than an error.
    if (!object.apiVersion || !object.kind || !name || !namespace) {
      throw new Error(`Cannot apply an object without apiVersion, kind, name and namespace: ${describeObject(object)}`);
    }
    const id = labels?.[DEPLOYMENT_LABEL];
    if (!id) throw new Error(`${describeObject(object)} has no ${DEPLOYMENT_LABEL} label`);
    ids.add(id);
  }
  if (ids.size !== 1) {
    throw new Error(ids.size === 0 ? "No objects to apply" : `The objects belong to several deployments: ${[...ids].join(", ")}`);
  }
  return [...ids][0]!;
}

/** An object's identity across API versions (autoscaling/v2 and v1 name the same HPA). */
function identity(apiVersion: string, kind: string, namespace: string, name: string): string {
  const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
  return `${group}|${kind}|${namespace}|${name}`;
}

async function deleteStaleObjects(
  connection: ClusterConnection,
  objects: readonly KubernetesObject[],
  deploymentId: string,
): Promise<void> {
  const wanted = new Set(objects.map((o) => identity(o.apiVersion!, o.kind!, o.metadata!.namespace!, o.metadata!.name!)));
  const namespaces = new Set(objects.map((o) => o.metadata!.namespace!));
  // Kinds the renderer adds later are collected too, once it renders them.
  const kinds: BerthKind[] = [...BERTH_KINDS];
  for (const object of objects) {
    if (!kinds.some((k) => k.apiVersion === object.apiVersion && k.kind === object.kind)) {
      kinds.push({ apiVersion: object.apiVersion!, kind: object.kind! });
    }
  }
  for (const namespace of namespaces) {
    for (const kind of kinds) {
      const existing = await listLabelled(connection, namespace, kind, deploymentSelector(deploymentId));
      for (const object of existing ?? []) {
        const name = object.metadata?.name ?? "";
        // An owned object (a Secret of a ServiceAccount, an HPA of KEDA) goes with its owner.
        if (object.metadata?.ownerReferences?.length) continue;
        if (wanted.has(identity(kind.apiVersion, kind.kind, namespace, name))) continue;
        await deleteObject(connection, object);
      }
    }
  }
}
