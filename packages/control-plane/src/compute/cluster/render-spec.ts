import type { V1ResourceRequirements } from "@kubernetes/client-node";
import { DeployError } from "../types.js";
import { type ClusterNames, type ClusterRevision, clusterNamesOf } from "./cluster-revision.js";

/*
 * resource_spec's scalar fields, read and checked once: sizes of the four
 * components, replica ranges, the database's storage and connections.
 */

/** A container's requests and limits: CPU in cores, memory in MB (null: not set). */
export interface Sizing {
  cpu: number | null;
  cpuLimit: number | null;
  memoryMb: number | null;
  memoryLimitMb: number | null;
}

/** A Deployment's replicas: a fixed count when min equals max, else an autoscaler's range. */
export interface ReplicaRange {
  min: number;
  max: number;
  autoscaled: boolean;
}

export interface ClusterSpec {
  api: Sizing;
  queue: Sizing;
  db: Sizing;
  cache: Sizing;
  apiReplicas: ReplicaRange;
  queueReplicas: ReplicaRange;
  dbStorageGi: number;
  dbMaxConnections: number;
}

/** What every renderer reads: the input, the object names, the checked resource_spec. */
export interface RenderContext {
  input: ClusterRevision;
  names: ClusterNames;
  spec: ClusterSpec;
  /** resource_spec.labels and annotations (ownership labels are added over the labels). */
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export function contextOf(input: ClusterRevision): RenderContext {
  const raw = input.resourceSpec ?? {};
  return {
    input,
    names: clusterNamesOf(input.deploymentId),
    spec: clusterSpecOf(raw, input.keda),
    labels: stringMapOf(raw, "labels"),
    annotations: stringMapOf(raw, "annotations"),
  };
}

function clusterSpecOf(raw: Record<string, unknown>, keda: boolean): ClusterSpec {
  const number = (field: string): number | null => {
    const value = raw[field];
    if (value === undefined || value === null) return null;
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
      throw new DeployError(`resource_spec.${field} must be a number of at least 0`);
    return value;
  };
  const sizing = (prefix: string): Sizing => ({
    cpu: number(`${prefix}cpu`),
    cpuLimit: number(`${prefix}cpu_limit`),
    memoryMb: number(`${prefix}memory_mb`),
    memoryLimitMb: number(`${prefix}memory_limit_mb`),
  });
  // An HPA needs at least one replica; KEDA may take the workers down to none while no run is pending.
  const apiMin = Math.max(1, Math.floor(number("min_scale") ?? 1));
  const apiMax = Math.max(apiMin, Math.floor(number("max_scale") ?? apiMin));
  const queueMin = Math.max(keda ? 0 : 1, Math.floor(number("queue_min_scale") ?? number("min_scale") ?? 1));
  const queueMax = Math.max(queueMin, 1, Math.floor(number("queue_max_scale") ?? queueMin));
  return {
    api: sizing(""),
    queue: sizing("queue_"),
    db: sizing("db_"),
    cache: sizing("cache_"),
    apiReplicas: { min: apiMin, max: apiMax, autoscaled: apiMax > apiMin },
    queueReplicas: { min: queueMin, max: queueMax, autoscaled: queueMax > queueMin },
    dbStorageGi: Math.max(1, Math.floor(number("db_storage_gi") ?? 1)),
    dbMaxConnections: Math.max(1, Math.floor(number("db_max_connections") ?? 100)),
  };
}

function stringMapOf(raw: Record<string, unknown>, field: "labels" | "annotations"): Record<string, string> {
  const value = raw[field];
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value) || !Object.values(value).every((item) => typeof item === "string"))
    throw new DeployError(`resource_spec.${field} must map names to strings`);
  return { ...(value as Record<string, string>) };
}

/** CPU cores as millicores ("500m"): exact for the one decimal the API keeps. */
export function cpuQuantity(cores: number): string {
  return `${Math.round(cores * 1000)}m`;
}

/** resource_spec's MB are the container engine's MiB. */
export function memoryQuantity(mb: number): string {
  return `${Math.round(mb)}Mi`;
}

/** A container's resources from a sizing; undefined when it sets nothing. */
export function resourcesOf(sizing: Sizing): V1ResourceRequirements | undefined {
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  if (sizing.cpu !== null && sizing.cpu > 0) requests.cpu = cpuQuantity(sizing.cpu);
  if (sizing.memoryMb !== null && sizing.memoryMb > 0) requests.memory = memoryQuantity(sizing.memoryMb);
  if (sizing.cpuLimit !== null && sizing.cpuLimit > 0) limits.cpu = cpuQuantity(sizing.cpuLimit);
  if (sizing.memoryLimitMb !== null && sizing.memoryLimitMb > 0) limits.memory = memoryQuantity(sizing.memoryLimitMb);
  const resources: V1ResourceRequirements = {
    ...(Object.keys(requests).length > 0 ? { requests } : {}),
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
  };
  return Object.keys(resources).length > 0 ? resources : undefined;
}
