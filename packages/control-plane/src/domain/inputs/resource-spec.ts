import { z } from "zod";
import { Text } from "./primitives.js";

const cpu = z.number().min(0.1).max(8);
const cpuLimit = z.number().min(0.1).max(16);
const scale = z.int().min(0);
const memory = z.int().min(1);
const anyObject = z.record(z.string(), z.unknown());
const reserved = z.unknown().optional().describe("Reserved, do not use: refused (400)");

export const RESERVED_RESOURCE_FIELDS = [
  "orchestrator_cpu",
  "orchestrator_cpu_limit",
  "orchestrator_memory_mb",
  "orchestrator_memory_limit_mb",
  "orchestrator_min_scale",
  "orchestrator_max_scale",
  "executor_cpu",
  "executor_cpu_limit",
  "executor_memory_mb",
  "executor_memory_limit_mb",
] as const;

/** ResourceSpec: CPU in cores (rounded to one decimal), memory in MB; every field nullable. */
export const ResourceSpec = z.strictObject({
  min_scale: scale.nullish(),
  max_scale: scale.nullish(),
  cpu: cpu.nullish(),
  cpu_limit: cpuLimit.nullish(),
  memory_mb: memory.nullish(),
  memory_limit_mb: memory.nullish(),
  queue_min_scale: scale.nullish(),
  queue_max_scale: scale.nullish(),
  queue_cpu: cpu.nullish(),
  queue_cpu_limit: cpuLimit.nullish(),
  queue_memory_mb: memory.nullish(),
  queue_memory_limit_mb: memory.nullish(),
  cache_cpu: cpu.nullish(),
  cache_cpu_limit: cpuLimit.nullish(),
  cache_memory_mb: memory.nullish(),
  cache_memory_limit_mb: memory.nullish(),
  labels: z.record(z.string(), Text).nullish(),
  annotations: z.record(z.string(), Text).nullish(),
  service_account_name: Text.nullish(),
  image_pull_secrets: z.array(anyObject).nullish(),
  volumes: z.array(anyObject).nullish(),
  volume_mounts: z.array(anyObject).nullish(),
  init_containers: z.array(anyObject).nullish(),
  sidecars: z.array(anyObject).nullish(),
  db_cpu: z.number().positive().nullish(),
  db_cpu_limit: z.number().positive().nullish(),
  db_memory_mb: memory.nullish(),
  db_memory_limit_mb: memory.nullish(),
  db_storage_gi: z.int().min(1).nullish(),
  db_max_connections: z.int().min(1).nullish(),
  ...Object.fromEntries(RESERVED_RESOURCE_FIELDS.map((field) => [field, reserved])),
});
export type ResourceSpecInput = z.infer<typeof ResourceSpec>;
