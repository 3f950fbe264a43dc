import type { SpawnPlanner } from "../process/spawn-plan.js";

/**
 * Where a build's commands run when the listener sandboxes them: as the
 * deployment's user, seeing only the build directory (writable), a private
 * /tmp and the system (see sandbox/). Unpacking, the install cache and the
 * artifact marker stay the listener's work, outside.
 */
export interface BuildSandbox {
  /** The base environment of every command (the sandbox's PATH, HOME, caches): replaces commandEnv's. */
  env: Record<string, string>;
  /** The berth CLI as the commands see it. */
  berthBin: string;
  /** A path under the build directory as the commands see it. */
  inside(hostPath: string): string;
  plan: SpawnPlanner;
  /** Makes the build's user the owner of `path` (only its directories, for trees of shared hard links). */
  handOver(path: string, directoriesOnly?: boolean): Promise<void>;
  /** Takes `path` back from the build's user: root's, readable by all, rewritable by no build (an install published to the cache). */
  seal(path: string): Promise<void>;
}
