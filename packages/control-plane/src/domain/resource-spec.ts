import { BadRequestError } from "@berth/service-kit";
import { RESOURCE_SPEC_FIELDS, type ResourceSpec } from "@berth/listener-protocol";
import { RESERVED_RESOURCE_FIELDS, type ResourceSpecInput } from "./inputs/resource-spec.js";

export { RESOURCE_SPEC_FIELDS, type ResourceSpec };

const CPU_FIELDS = ["cpu", "cpu_limit", "queue_cpu", "queue_cpu_limit", "cache_cpu", "cache_cpu_limit", "db_cpu", "db_cpu_limit"];

const roundCpu = (value: number) => Math.round(value * 10) / 10;

/**
 * The stored ResourceSpec of a request: reserved fields refused, CPU rounded
 * to one decimal, defaults derived as the spec's table says (limits 2× their
 * request, queue_* from the API server values, cache memory limit 1×), then
 * every limit at least its request and min_scale at most max_scale.
 */
export function normalizeResourceSpec(input: ResourceSpecInput, where: string): ResourceSpec {
  const given: Record<string, unknown> = input;
  for (const field of RESERVED_RESOURCE_FIELDS) {
    if (given[field] !== undefined && given[field] !== null) {
      throw new BadRequestError(`${where}.${field} is reserved and must not be set`);
    }
  }
  const spec: Record<string, unknown> = {};
  for (const key of RESOURCE_SPEC_FIELDS) {
    const value = given[key] ?? null;
    spec[key] = CPU_FIELDS.includes(key) && typeof value === "number" ? roundCpu(value) : value;
  }
  const num = (key: string) => {
    const value = spec[key];
    return typeof value === "number" ? value : null;
  };
  const fill = (key: string, value: number | null) => {
    if (spec[key] === undefined || spec[key] === null) spec[key] = value;
  };
  const double = (key: string) => (num(key) === null ? null : num(key)! * 2);
  fill("queue_min_scale", num("min_scale"));
  fill("queue_max_scale", num("max_scale"));
  fill("queue_cpu", num("cpu"));
  fill("queue_memory_mb", num("memory_mb"));
  fill("cpu_limit", double("cpu") === null ? null : roundCpu(double("cpu")!));
  fill("memory_limit_mb", double("memory_mb"));
  fill("queue_cpu_limit", double("queue_cpu") === null ? null : roundCpu(double("queue_cpu")!));
  fill("queue_memory_limit_mb", double("queue_memory_mb"));
  fill("cache_cpu_limit", double("cache_cpu") === null ? null : roundCpu(double("cache_cpu")!));
  fill("cache_memory_limit_mb", num("cache_memory_mb"));
  fill("db_cpu_limit", double("db_cpu") === null ? null : roundCpu(double("db_cpu")!));
  fill("db_memory_limit_mb", double("db_memory_mb"));

  for (const prefix of ["", "queue_", "cache_", "db_"]) {
    for (const [request, limit] of [
      [`${prefix}cpu`, `${prefix}cpu_limit`],
      [`${prefix}memory_mb`, `${prefix}memory_limit_mb`],
    ]) {
      const requested = num(request);
      const limited = num(limit);
      if (requested !== null && limited !== null && limited < requested) {
        throw new BadRequestError(`${where}.${limit} (${limited}) must not be below ${request} (${requested})`);
      }
    }
  }
  for (const prefix of ["", "queue_"]) {
    const min = num(`${prefix}min_scale`);
    const max = num(`${prefix}max_scale`);
    if (min !== null && max !== null && min > max) {
      throw new BadRequestError(`${where}.${prefix}min_scale (${min}) must not be above ${prefix}max_scale (${max})`);
    }
  }
  return resourceSpecOf(spec);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const numberOrNull = (value: unknown) => (typeof value === "number" ? value : null);
const textOrNull = (value: unknown) => (typeof value === "string" ? value : null);
const objectsOrNull = (value: unknown) => (Array.isArray(value) ? value.filter(isObject) : null);
const textMapOrNull = (value: unknown): Record<string, string> | null =>
  isObject(value)
    ? Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string"))
    : null;

/**
 * A stored resource_spec (JSON, checked by the request schema when it was
 * written) as the typed ResourceSpec: every field, null when not set.
 */
export function resourceSpecOf(stored: unknown): ResourceSpec {
  const spec = isObject(stored) ? stored : {};
  const number = (field: string) => numberOrNull(spec[field]);
  return {
    min_scale: number("min_scale"),
    max_scale: number("max_scale"),
    cpu: number("cpu"),
    cpu_limit: number("cpu_limit"),
    memory_mb: number("memory_mb"),
    memory_limit_mb: number("memory_limit_mb"),
    queue_min_scale: number("queue_min_scale"),
    queue_max_scale: number("queue_max_scale"),
    queue_cpu: number("queue_cpu"),
    queue_cpu_limit: number("queue_cpu_limit"),
    queue_memory_mb: number("queue_memory_mb"),
    queue_memory_limit_mb: number("queue_memory_limit_mb"),
    cache_cpu: number("cache_cpu"),
    cache_cpu_limit: number("cache_cpu_limit"),
    cache_memory_mb: number("cache_memory_mb"),
    cache_memory_limit_mb: number("cache_memory_limit_mb"),
    labels: textMapOrNull(spec.labels),
    annotations: textMapOrNull(spec.annotations),
    service_account_name: textOrNull(spec.service_account_name),
    image_pull_secrets: objectsOrNull(spec.image_pull_secrets),
    volumes: objectsOrNull(spec.volumes),
    volume_mounts: objectsOrNull(spec.volume_mounts),
    init_containers: objectsOrNull(spec.init_containers),
    sidecars: objectsOrNull(spec.sidecars),
    db_cpu: number("db_cpu"),
    db_cpu_limit: number("db_cpu_limit"),
    db_memory_mb: number("db_memory_mb"),
    db_memory_limit_mb: number("db_memory_limit_mb"),
    db_storage_gi: number("db_storage_gi"),
    db_max_connections: number("db_max_connections"),
  };
}
