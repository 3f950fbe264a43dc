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
  /** The API and worker containers' size where resource_spec sets none (the deployment_type's preset, else SERVER_DEFAULTS). */
  serverDefaults: SizeDefaults;
}

export function contextOf(input: ClusterRevision): RenderContext {
  const raw = input.resourceSpec ?? {};
  return {
    input,
    names: clusterNamesOf(input.deploymentId),
    spec: clusterSpecOf(raw, input.keda),
    labels: stringMapOf(raw, "labels"),
    annotations: stringMapOf(raw, "annotations"),
    serverDefaults: input.sizePreset
      ? { ...SERVER_DEFAULTS, cpuLimit: input.sizePreset.cpu, memoryLimitMb: input.sizePreset.memoryLimitMb }
      : SERVER_DEFAULTS,
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
  const entries = typeof value === "object" && !Array.isArray(value) ? Object.entries(value) : undefined;
  if (!entries?.every((entry): entry is [string, string] => typeof entry[1] === "string"))
    throw new DeployError(`resource_spec.${field} must map names to strings`);
  return Object.fromEntries(entries);
}

/** CPU cores as millicores ("500m"): exact for the one decimal the API keeps. */
export function cpuQuantity(cores: number): string {
  return `${Math.round(cores * 1000)}m`;
}

/** resource_spec's MB are the container engine's MiB. */
export function memoryQuantity(mb: number): string {
  return `${Math.round(mb)}Mi`;
}

/** What a container gets where resource_spec sets nothing: its limits, and its ephemeral storage (MiB). */
export interface SizeDefaults {
  cpuLimit: number;
  memoryLimitMb: number;
  ephemeralMb: number;
  ephemeralLimitMb: number;
}

/**
 * Sizes of the containers resource_spec does not size. The servers' come
 * from the deployment_type when it has a preset (docs/git-deployments.md);
 * `prod`, or no type, gets SERVER_DEFAULTS. A server's ephemeral storage holds
 * its /tmp (512 MiB at most) and its logs; the database's data is on its claim.
 */
export const SERVER_DEFAULTS: SizeDefaults = { cpuLimit: 2, memoryLimitMb: 2048, ephemeralMb: 256, ephemeralLimitMb: 2048 };
export const DB_DEFAULTS: SizeDefaults = { cpuLimit: 1, memoryLimitMb: 1024, ephemeralMb: 128, ephemeralLimitMb: 1024 };
export const CACHE_DEFAULTS: SizeDefaults = { cpuLimit: 0.5, memoryLimitMb: 256, ephemeralMb: 64, ephemeralLimitMb: 256 };
/** Init containers and sidecars of resource_spec, for the limits their own resources leave out. */
export const COMPANION_DEFAULTS: SizeDefaults = { cpuLimit: 0.5, memoryLimitMb: 256, ephemeralMb: 64, ephemeralLimitMb: 512 };

/** The sizing with every limit set: resource_spec's, else the defaults (never below its request). */
export function effectiveSizing(sizing: Sizing, defaults: SizeDefaults): Sizing & { cpuLimit: number; memoryLimitMb: number } {
  const positive = (value: number | null) => (value !== null && value > 0 ? value : null);
  return {
    ...sizing,
    cpuLimit: Math.max(positive(sizing.cpuLimit) ?? defaults.cpuLimit, positive(sizing.cpu) ?? 0),
    memoryLimitMb: Math.max(positive(sizing.memoryLimitMb) ?? defaults.memoryLimitMb, positive(sizing.memoryMb) ?? 0),
  };
}

/**
 * A container's requests and limits, every one set: CPU, memory and
 * ephemeral storage. A limit resource_spec leaves out is the default's; a
 * request it leaves out is half its limit (as the API makes a limit twice
 * its request), so the scheduler reserves something for every container.
 */
export function resourcesOf(sizing: Sizing, defaults: SizeDefaults): V1ResourceRequirements {
  const effective = effectiveSizing(sizing, defaults);
  const positive = (value: number | null) => (value !== null && value > 0 ? value : null);
  const cpu = positive(sizing.cpu) ?? Math.round((effective.cpuLimit / 2) * 1000) / 1000;
  const memory = positive(sizing.memoryMb) ?? effective.memoryLimitMb / 2;
  return {
    requests: {
      cpu: cpuQuantity(cpu),
      memory: memoryQuantity(memory),
      "ephemeral-storage": memoryQuantity(defaults.ephemeralMb),
    },
    limits: {
      cpu: cpuQuantity(effective.cpuLimit),
      memory: memoryQuantity(effective.memoryLimitMb),
      "ephemeral-storage": memoryQuantity(defaults.ephemeralLimitMb),
    },
  };
}

/**
 * A companion's resources: its own, each limit (and request) it leaves out
 * filled from COMPANION_DEFAULTS; a default limit below its own request is
 * raised to the request.
 */
export function companionResourcesOf(given: V1ResourceRequirements | undefined): V1ResourceRequirements {
  const defaults = resourcesOf({ cpu: null, cpuLimit: null, memoryMb: null, memoryLimitMb: null }, COMPANION_DEFAULTS);
  const requests = { ...defaults.requests, ...given?.requests };
  const limits: Record<string, string> = { ...defaults.limits };
  for (const [name, value] of Object.entries(given?.limits ?? {})) limits[name] = String(value);
  for (const name of Object.keys(limits)) {
    const request = requests[name];
    if (given?.limits?.[name] === undefined && request !== undefined && quantityOf(String(request)) > quantityOf(limits[name]!))
      limits[name] = String(request);
  }
  // A request above its limit is the user's to fix; a request left out is at most its limit.
  for (const name of Object.keys(requests)) {
    if (given?.requests?.[name] === undefined && quantityOf(String(requests[name])) > quantityOf(limits[name] ?? "0"))
      requests[name] = limits[name]!;
  }
  return { ...given, requests, limits };
}

/** A Kubernetes quantity as a number, for comparing two of the same resource (500m, 1, 256Mi, 1Gi, 1G). */
function quantityOf(quantity: string): number {
  const match = /^([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity.trim());
  if (!match) return Number.NaN;
  const unit =
    { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[match[2] ?? ""] ?? 1;
  return Number(match[1]) * unit;
}
