import { readFileSync } from "node:fs";

/** The children of `pid` (its main thread's), from /proc. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * Sends `signal` to the command a bwrap process runs: bwrap forks a pid-1
 * reaper in the new pid namespace, which runs the command, so the command is
 * bwrap's grandchild. Signalling bwrap instead would kill it, and
 * --die-with-parent would then SIGKILL the whole sandbox: no graceful stop.
 * Returns false when there is no command yet (the sandbox is being set up).
 */
export function signalSandboxed(bwrapPid: number, signal: NodeJS.Signals): boolean {
  let sent = false;
  for (const reaper of childrenOf(bwrapPid)) {
    for (const command of childrenOf(reaper)) {
      try {
        process.kill(command, signal);
        sent = true;
      } catch {
        // Exited meanwhile.
      }
    }
  }
  return sent;
}
