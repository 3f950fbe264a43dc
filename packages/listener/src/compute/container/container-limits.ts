import type Docker from "dockerode";

/** Processes (threads included) one container may have: enough for Node and its workers, not for a fork bomb. */
export const PIDS_LIMIT = 1024;

/** Every container's output on the host: json-file, at most 3 files of 10 MB (the listener follows the stream and keeps its own log). */
export const BOUNDED_LOGS: Docker.HostConfig["LogConfig"] = {
  Type: "json-file",
  Config: { "max-size": "10m", "max-file": "3" },
};

const MIB = 1024 * 1024;

/** Memory (swap included: none beyond it) and CPU limits, for what the sizes set (null or 0: not limited). */
export function sizeLimits(memoryLimitMb: number | null | undefined, cpu: number | null | undefined): Docker.HostConfig {
  return {
    ...(memoryLimitMb != null && memoryLimitMb > 0
      ? { Memory: Math.floor(memoryLimitMb * MIB), MemorySwap: Math.floor(memoryLimitMb * MIB) }
      : {}),
    ...(cpu != null && cpu > 0 ? { NanoCpus: Math.round(cpu * 1e9) } : {}),
  };
}
