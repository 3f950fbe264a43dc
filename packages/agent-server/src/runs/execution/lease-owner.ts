import { randomUUID } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

/**
 * Lease owners name where they run, so a process can tell the dead leases of
 * its own host from live ones without waiting for them to lapse:
 * `berth:<hostname>:<boot id>:<pid namespace>:<pid>:<process start>:<worker>`.
 * Hostname, boot and pid namespace together say that a pid means the same
 * process to both sides (another host, a reboot or another container's pid
 * namespace do not); the start time (in clock ticks since boot) tells a pid
 * reused by another process from the one that held the lease. Owners of other
 * hosts, or when this one cannot read /proc (not Linux), are never judged:
 * their leases lapse.
 */
const PREFIX = "berth";

interface OwnerParts {
  host: string;
  pid: number;
  start: string;
}

/** This host as lease owners name it; undefined when pids cannot be checked here. */
const thisHost: string | undefined = (() => {
  try {
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const pidNamespace = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1];
    if (!boot || !pidNamespace) return undefined;
    return `${hostname()}:${boot}:${pidNamespace}`;
  } catch {
    return undefined;
  }
})();

/**
 * State and start time (clock ticks after boot) of process `pid`, fields 3
 * and 22 of /proc/<pid>/stat; undefined when /proc shows no such process.
 */
function processStat(pid: number): { state: string; start: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0], start: fields[19] };
  } catch {
    return undefined;
  }
}

/** A new owner name for one worker of this process. */
export function newLeaseOwner(): string {
  const host = thisHost ?? `${hostname()}:?:?`;
  return [PREFIX, host, process.pid, processStat(process.pid)?.start ?? "?", randomUUID().slice(0, 8)].join(":");
}

function parse(owner: string): OwnerParts | undefined {
  const parts = owner.split(":");
  if (parts.length !== 7 || parts[0] !== PREFIX) return undefined;
  const pid = Number(parts[4]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return { host: parts.slice(1, 4).join(":"), pid, start: parts[5] };
}

/**
 * The owners among `owners` that are processes of this host that no longer
 * run: their pid is gone (or a zombie), or now names another process (another
 * start time).
 */
export function deadOwnersOnThisHost(owners: string[]): string[] {
  if (thisHost === undefined) return [];
  return owners.filter((owner) => {
    const parts = parse(owner);
    if (!parts || parts.host !== thisHost || parts.start === "?") return false;
    const stat = processStat(parts.pid);
    // A zombie has exited: it only waits for its parent to collect its status.
    if (stat) return stat.start !== parts.start || stat.state === "Z" || stat.state === "X";
    return !processExists(parts.pid);
  });
}

/**
 * Whether a pid names a live process, asked of the kernel: /proc may hide
 * other users' processes (hidepid), which must not make them look dead.
 */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}
