import { type LimitHits, limitNotes, outOfMemory } from "../process/spawn-plan.js";
import type { OutputTail } from "./process-output.js";

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The server could not be started at all. */
  error?: Error;
  /** The engine killed it for using more memory than its limit. */
  outOfMemory?: boolean;
  /** What the kernel's limits did to a local process (killed it for memory, refused forks, a full disk). */
  limits?: LimitHits;
}

/**
 * One started agent server, whatever runs it (a local process, a container):
 * what supervision needs to health-check, restart and stop it.
 */
export interface LaunchedProcess {
  /** Its last output lines, for the reason of a failed start or a crash. */
  readonly tail: OutputTail;
  /** Resolves once it is gone (and its last output read). */
  readonly exited: Promise<Exit>;
  /** The URL it serves at, once known. */
  readonly listening: Promise<string>;
  /** The graphs it said it loaded, once listening (a local process says; a container is not asked). */
  readonly graphs?: readonly string[];
  /** A host pid to record for orphan cleanup, or 0 when the engine keeps track of it (containers). */
  readonly pid: number;
  hasExited(): boolean;
  /** Asks it to stop (SIGTERM: it finishes open responses and runs), kills it after `graceMs`, and frees what it held. */
  terminate(graceMs: number): Promise<Exit>;
}

export function describeExit(exit: Exit): string {
  const notes = limitNotes(exit.limits);
  return notes ? `${describeEnd(exit)} (${notes})` : describeEnd(exit);
}

function describeEnd(exit: Exit): string {
  if (exit.error) return `could not be started (${exit.error.message})`;
  if (exit.limits?.outOfMemoryMb) return `was ${outOfMemory(exit.limits.outOfMemoryMb)}`;
  if (exit.outOfMemory) return `was killed for exceeding its memory limit (exit code ${exit.code})`;
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code}`;
}
