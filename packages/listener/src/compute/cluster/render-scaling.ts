import type { KubernetesObject, V2HorizontalPodAutoscaler } from "@kubernetes/client-node";
import { metadataOf } from "./render-labels.js";
import { CREDENTIAL_KEYS } from "./render-secrets.js";
import type { RenderContext } from "./render-spec.js";
import { PLATFORM_WORKER_SLOTS } from "../types.js";

/*
 * What grows the servers between resource_spec's min and max: CPU for the
 * API pods (an HPA), and for the workers the runs waiting for them when the
 * cluster has KEDA (a ScaledObject), else CPU too.
 */

/** The HPA's CPU target, as a share of the pods' CPU request. */
export const CPU_UTILIZATION_TARGET = 70;

/**
 * The runs a worker would hold: those executing and those waiting. The
 * database is the deployment's own, so every run counts. Counting the
 * waiting ones alone would shrink the workers while they are busy.
 */
export const IN_FLIGHT_RUNS_QUERY = "SELECT count(*) FROM runs WHERE status IN ('pending', 'running')";

export function renderScaling(context: RenderContext): KubernetesObject[] {
  const { spec, input, names } = context;
  const objects: KubernetesObject[] = [];
  if (spec.apiReplicas.autoscaled) objects.push(cpuAutoscaler(context, "api", names.api));
  if (spec.queueReplicas.autoscaled) {
    if (input.keda) objects.push(...queueScaledObject(context));
    else objects.push(cpuAutoscaler(context, "queue", names.queue));
  }
  return objects;
}

function cpuAutoscaler(context: RenderContext, component: "api" | "queue", target: string): V2HorizontalPodAutoscaler {
  const range = component === "api" ? context.spec.apiReplicas : context.spec.queueReplicas;
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: metadataOf(context, component, target),
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: target },
      minReplicas: range.min,
      maxReplicas: range.max,
      metrics: [
        {
          type: "Resource",
          resource: { name: "cpu", target: { type: "Utilization", averageUtilization: CPU_UTILIZATION_TARGET } },
        },
      ],
    },
  };
}

/** The worker concurrency BERTH_WORKERS gives the workers (from the env Secret), else the platform's (set inline). */
export function workerConcurrencyOf(env: Record<string, string>): number {
  const workers = Number(env.BERTH_WORKERS);
  return Number.isInteger(workers) && workers >= 1 ? workers : PLATFORM_WORKER_SLOTS;
}

/**
 * KEDA's ScaledObject for the workers, and the TriggerAuthentication that
 * gives its PostgreSQL trigger the connection from the credentials Secret
 * (KEDA's operator runs in its own namespace: the URL names the Service with
 * its namespace).
 */
function queueScaledObject(context: RenderContext): KubernetesObject[] {
  const { names, spec, input } = context;
  const authentication = {
    apiVersion: "keda.sh/v1alpha1",
    kind: "TriggerAuthentication",
    metadata: metadataOf(context, "queue", names.queue),
    spec: {
      secretTargetRef: [{ parameter: "connection", name: names.credentials, key: CREDENTIAL_KEYS.scalerConnection }],
    },
  };
  const scaledObject = {
    apiVersion: "keda.sh/v1alpha1",
    kind: "ScaledObject",
    metadata: metadataOf(context, "queue", names.queue),
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: names.queue },
      minReplicaCount: spec.queueReplicas.min,
      maxReplicaCount: spec.queueReplicas.max,
      triggers: [
        {
          type: "postgresql",
          metadata: { query: IN_FLIGHT_RUNS_QUERY, targetQueryValue: String(workerConcurrencyOf(input.env)) },
          authenticationRef: { name: names.queue },
        },
      ],
    },
  };
  return [authentication, scaledObject];
}
