import { BadRequestError } from "@berth/service-kit";
import { RESERVED_RESOURCE_FIELDS, ResourceSpec as ResourceSpecSchema, type ResourceSpecInput } from "./inputs/resource-spec.js";

export type ResourceSpec = Record<string, unknown>;

const CPU_FIELDS = ["cpu", "cpu_limit", "queue_cpu", "queue_cpu_limit", "cache_cpu", "cache_cpu_limit", "db_cpu", "db_cpu_limit"];

/** Every field a stored spec has (null when not given), reserved ones excepted. */
export const RESOURCE_SPEC_FIELDS = Object.keys(ResourceSpecSchema.shape).filter(
  (key) => !(RESERVED_RESOURCE_FIELDS as readonly string[]).includes(key),
);

const roundCpu = (value: number) => Math.round(value * 10) / 10;

/**
 * The stored ResourceSpec of a request: reserved fields refused, CPU rounded
 * to one decimal, defaults derived as the spec's table says (limits 2× their
 * request, queue_* from the API server values, cache memory limit 1×), then
 * every limit at least its request and min_scale at most max_scale.
 */
export function normalizeResourceSpec(input: ResourceSpecInput, where: string): ResourceSpec {
  const given = input as Record<string, unknown>;
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
  const num = (key: string) => (typeof spec[key] === "number" ? (spec[key] as number) : null);
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
  return spec;
}
