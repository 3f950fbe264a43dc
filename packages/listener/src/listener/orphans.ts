import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Agent-server processes a listener started are recorded as pid files
 * (`<deployments>/<id>/pids/<pid>`), so that a listener killed without a
 * chance to stop them (kill -9) stops them at its next start: otherwise they
 * would keep the deployment's database and runs beside the new ones.
 * A sandboxed server's pid is its bwrap's: SIGKILL to bwrap kills the
 * sandbox's pid 1 (--die-with-parent), and with it every process inside.
 * (Sandboxes also die with the listener itself; the pid files are for the rest.)
 */
export async function recordPid(deploymentDir: string, pid: number): Promise<void> {
  if (pid <= 0) return; // a container: the engine keeps track of it
  await mkdir(join(deploymentDir, "pids"), { recursive: true });
  await writeFile(join(deploymentDir, "pids", String(pid)), "");
}

export async function forgetPid(deploymentDir: string, pid: number): Promise<void> {
  await rm(join(deploymentDir, "pids", String(pid)), { force: true });
}

/** Kills the recorded processes that still run an agent server; returns how many. */
export function killOrphans(deploymentsDir: string): number {
  if (!existsSync(deploymentsDir)) return 0;
  let killed = 0;
  for (const deployment of readdirSync(deploymentsDir)) {
    const pidsDir = join(deploymentsDir, deployment, "pids");
    if (!existsSync(pidsDir)) continue;
    for (const name of readdirSync(pidsDir)) {
      const pid = Number(name);
      if (Number.isInteger(pid) && isAgentServer(pid)) {
        try {
          process.kill(pid, "SIGKILL");
          killed += 1;
        } catch {
          // gone meanwhile
        }
      }
      rmSync(join(pidsDir, name), { force: true });
    }
  }
  return killed;
}

/** The pid may have been reused by an unrelated process since: only an agent server of ours (or bwrap around one) is killed. */
function isAgentServer(pid: number): boolean {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\u0000");
    return command.some((part) => part.endsWith("berth.mjs")) && command.includes("serve");
  } catch {
    return false;
  }
}
