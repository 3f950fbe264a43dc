import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { readdir, readFile, rmdir } from "node:fs/promises";
import { join } from "node:path";

/** What one process's cgroup limits (see limits.ts for the values). */
export interface CgroupLimits {
  memoryMb: number;
  /** Processes and threads (pids.max). */
  processes: number;
  /** Cores this cgroup weighs against the others under contention (cpu.shares 1024 or cpu.weight 100 per core). */
  cpuWeight: number;
  /** A hard ceiling in cores (CFS quota), or none. */
  cpuQuota?: number;
}

/** What the kernel did to a cgroup's processes. */
export interface CgroupEvents {
  oomKills: number;
  refusedForks: number;
}

type Controller = "memory" | "pids" | "cpu";

export type CgroupSupport = { available: true; cgroups: Cgroups } | { available: false; reason: string };

/** Where the kernel's files are; tests of the detection may point them elsewhere. */
export interface CgroupHost {
  mountinfo: string;
  selfCgroup: string;
}

const CFS_PERIOD_US = 100_000;
/** How long the leftovers of a finished process may take to die before its cgroup is given up on (removed later). */
const REMOVE_TRIES = 40;
const REMOVE_INTERVAL_MS = 50;

/**
 * The listener's cgroups: one directory of its own (`berth-<name>`) below
 * the cgroup the listener runs in, in each hierarchy (v1: memory, pids, cpu)
 * or in the unified one (v2); a directory per deployment in it, and one per
 * process (a server or a build command) in that, which holds the limits.
 * The roots are recorded in `recordFile`, so a listener killed without
 * cleaning up has them removed at its next start (with what still runs in them).
 */
export class Cgroups {
  private constructor(
    readonly version: 1 | 2,
    /** The listener's directory in each hierarchy (v2: one, for all controllers). */
    private readonly roots: ReadonlyMap<Controller, string>,
  ) {}

  /**
   * Finds a writable hierarchy with the memory and pids controllers (v1
   * first: on a hybrid host, v2 holds none of them), makes the listener's
   * root in it and a probe cgroup with limits. Never throws: says why not.
   */
  static async open(name: string, recordFile: string, host?: CgroupHost): Promise<CgroupSupport> {
    const unavailable = (reason: string): CgroupSupport => ({ available: false, reason });
    if (process.platform !== "linux") return unavailable("cgroups need Linux");
    if (process.getuid?.() !== 0 && !host) return unavailable("the listener does not run as root");
    let mountinfo: string;
    let selfCgroup: string;
    try {
      mountinfo = host?.mountinfo ?? readFileSync("/proc/self/mountinfo", "utf8");
      selfCgroup = host?.selfCgroup ?? readFileSync("/proc/self/cgroup", "utf8");
    } catch (error) {
      return unavailable(`cannot read /proc: ${(error as Error).message}`);
    }
    const found = findRoots(mountinfo, selfCgroup, `berth-${name}`);
    if (typeof found === "string") return unavailable(found);
    const cgroups = new Cgroups(found.version, found.roots);
    await removeRecorded(recordFile);
    try {
      cgroups.makeRoots();
      writeFileSync(recordFile, `${[...new Set(found.roots.values())].join("\n")}\n`, { mode: 0o600 });
      const probe = cgroups.create("probe", "probe", { memoryMb: 64, processes: 16, cpuWeight: 1, cpuQuota: 1 });
      await probe.remove();
    } catch (error) {
      await cgroups.removeAll();
      return unavailable(`no writable cgroup hierarchy (${(error as Error).message})`);
    }
    return { available: true, cgroups };
  }

  /** E.g. `cgroup v1 (memory, pids, cpu) in /sys/fs/cgroup/memory/<listener's>/berth-<name>`, for the start line. */
  describe(): string {
    return `cgroup v${this.version} (${[...this.roots.keys()].join(", ")}) in ${this.roots.get("memory")}`;
  }

  /**
   * A new cgroup `<deployment>/<kind>-<random>` with `limits`, ready for one
   * process to join (synchronous: planning a build command is). Throws when
   * the kernel refuses a limit: the process must not run without.
   */
  create(deploymentId: string, kind: string, limits: CgroupLimits): Cgroup {
    if (!/^[\w.-]+$/.test(deploymentId) || deploymentId.startsWith(".")) throw new Error(`bad deployment id ${deploymentId}`);
    const leafName = `${kind}-${randomBytes(4).toString("hex")}`;
    const leaves = new Map<Controller, string>();
    const made: string[] = [];
    try {
      for (const [controller, root] of this.distinctRoots()) {
        const deploymentDir = join(root, deploymentId);
        if (!existsSync(deploymentDir)) {
          mkdirSync(deploymentDir);
          if (this.version === 2) enableControllers(deploymentDir, [...this.roots.keys()]);
        }
        const leaf = join(deploymentDir, leafName);
        mkdirSync(leaf);
        made.push(leaf);
        leaves.set(controller, leaf);
      }
      const dirOf = (controller: Controller) => (this.version === 2 ? made[0]! : leaves.get(controller));
      this.writeLimits(dirOf, limits);
    } catch (error) {
      for (const leaf of made) removeNow(leaf);
      throw error;
    }
    return new Cgroup(this.version, made, (controller) => (this.version === 2 ? made[0] : leaves.get(controller)));
  }

  /** Removes a deployment's cgroups (it was deleted), killing what still runs in them. */
  async removeDeployment(deploymentId: string): Promise<void> {
    await Promise.all([...this.distinctRoots()].map(([, root]) => removeTree(join(root, deploymentId))));
  }

  /** Removes the listener's cgroups (it stops), killing what still runs in them. */
  async removeAll(): Promise<void> {
    await Promise.all([...this.distinctRoots()].map(([, root]) => removeTree(root)));
  }

  private makeRoots(): void {
    for (const [, root] of this.distinctRoots()) {
      if (this.version === 2) enableControllers(join(root, ".."), [...this.roots.keys()]);
      if (!existsSync(root)) mkdirSync(root);
      if (this.version === 2) enableControllers(root, [...this.roots.keys()]);
    }
  }

  /** Each root once (on v2 all controllers share one). */
  private distinctRoots(): Map<Controller, string> {
    const seen = new Map<string, Controller>();
    for (const [controller, root] of this.roots) if (!seen.has(root)) seen.set(root, controller);
    return new Map([...seen].map(([root, controller]) => [controller, root]));
  }

  private writeLimits(dirOf: (controller: Controller) => string | undefined, limits: CgroupLimits): void {
    const bytes = Math.round(limits.memoryMb * 1024 * 1024);
    const memory = dirOf("memory")!;
    const pids = dirOf("pids")!;
    const cpu = this.roots.has("cpu") ? dirOf("cpu") : undefined;
    writeFileSync(join(pids, "pids.max"), String(limits.processes));
    if (this.version === 1) {
      writeFileSync(join(memory, "memory.limit_in_bytes"), String(bytes));
      // Memory plus swap, where the kernel accounts swap: swapping out is no way around the limit.
      writeIfPresent(join(memory, "memory.memsw.limit_in_bytes"), String(bytes));
      if (cpu) {
        writeFileSync(join(cpu, "cpu.shares"), String(Math.max(2, Math.round(1024 * limits.cpuWeight))));
        if (limits.cpuQuota) {
          writeFileSync(join(cpu, "cpu.cfs_period_us"), String(CFS_PERIOD_US));
          writeFileSync(join(cpu, "cpu.cfs_quota_us"), String(Math.max(1000, Math.round(limits.cpuQuota * CFS_PERIOD_US))));
        }
      }
    } else {
      writeFileSync(join(memory, "memory.max"), String(bytes));
      writeIfPresent(join(memory, "memory.swap.max"), "0");
      if (cpu) {
        writeFileSync(join(cpu, "cpu.weight"), String(Math.min(10_000, Math.max(1, Math.round(100 * limits.cpuWeight)))));
        if (limits.cpuQuota)
          writeFileSync(join(cpu, "cpu.max"), `${Math.max(1000, Math.round(limits.cpuQuota * CFS_PERIOD_US))} ${CFS_PERIOD_US}`);
      }
    }
  }
}

/** One process's cgroup (a directory per v1 hierarchy, one on v2). */
export class Cgroup {
  constructor(
    private readonly version: 1 | 2,
    private readonly dirs: readonly string[],
    private readonly dirOf: (controller: Controller) => string | undefined,
  ) {}

  /** The files a process writes its pid to, to join. */
  get procsFiles(): string[] {
    return this.dirs.map((dir) => join(dir, "cgroup.procs"));
  }

  /** The OOM kills and refused forks so far. */
  events(): CgroupEvents {
    const memoryFile = this.version === 1 ? "memory.oom_control" : "memory.events";
    return {
      oomKills: counter(join(this.dirOf("memory")!, memoryFile), "oom_kill"),
      refusedForks: counter(join(this.dirOf("pids")!, "pids.events"), "max"),
    };
  }

  /** Kills what is left in it (the process is gone: leftovers are its strays) and removes it; gives up quietly. */
  async remove(): Promise<void> {
    await Promise.all(this.dirs.map((dir) => removeTree(dir)));
  }

  /** Removes it at once, for a process that never joined. */
  removeNow(): void {
    for (const dir of this.dirs) removeNow(dir);
  }
}

/**
 * The listener's root (`rootName` below its own cgroup) in each hierarchy,
 * from its mount table and /proc/self/cgroup; or why there is none.
 */
export function findRoots(
  mountinfo: string,
  selfCgroup: string,
  rootName: string,
): { version: 1 | 2; roots: Map<Controller, string> } | string {
  const mounts = mountinfo
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [left, right = ""] = line.split(" - ");
      const fields = left!.split(" ");
      const [fstype, , superOptions = ""] = right.split(" ");
      return {
        root: unescapeMountinfo(fields[3] ?? ""),
        point: unescapeMountinfo(fields[4] ?? ""),
        fstype,
        options: superOptions.split(","),
      };
    });
  const memberships = selfCgroup
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [, controllers = "", ...path] = line.split(":");
      return { controllers: controllers.split(",").filter(Boolean), path: path.join(":") };
    });
  const v1 = new Map<Controller, string>();
  for (const controller of ["memory", "pids", "cpu"] as const) {
    const mount = mounts.find((m) => m.fstype === "cgroup" && m.options.includes(controller));
    const member = memberships.find((m) => m.controllers.includes(controller));
    if (mount && member && mount.root === "/") v1.set(controller, join(mount.point, member.path, rootName));
  }
  if (v1.has("memory") && v1.has("pids")) return { version: 1, roots: v1 };

  const unified = mounts.find((m) => m.fstype === "cgroup2");
  const member = memberships.find((m) => m.controllers.length === 0 && m.path !== "");
  if (!unified || !member) return "neither cgroup v1 memory and pids hierarchies nor a cgroup v2 hierarchy is mounted";
  const own = join(unified.point, member.path);
  let available: string[];
  try {
    available = readFileSync(join(own, "cgroup.controllers"), "utf8").trim().split(/\s+/);
  } catch (error) {
    return `cannot read the listener's cgroup ${own}: ${(error as Error).message}`;
  }
  if (!available.includes("memory") || !available.includes("pids"))
    return `the listener's cgroup v2 ${own} does not have the memory and pids controllers (it has: ${available.join(" ") || "none"})`;
  const root = join(own, rootName);
  const roots = new Map<Controller, string>([
    ["memory", root],
    ["pids", root],
  ]);
  if (available.includes("cpu")) roots.set("cpu", root);
  return { version: 2, roots };
}

/**
 * Lets the children of a v2 cgroup have the controllers. The kernel refuses
 * (EBUSY) for a cgroup other than the root that holds processes itself: a
 * listener that shares its cgroup with others must be started in one of its
 * own (systemd's Delegate=yes, or a cgroup made for it).
 */
function enableControllers(dir: string, controllers: Controller[]): void {
  const enabled = readFileSync(join(dir, "cgroup.subtree_control"), "utf8").trim().split(/\s+/);
  const missing = controllers.filter((controller) => !enabled.includes(controller));
  if (missing.length === 0) return;
  try {
    writeFileSync(join(dir, "cgroup.subtree_control"), missing.map((controller) => `+${controller}`).join(" "));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EBUSY")
      throw new Error(
        `${dir} holds processes, so cgroup v2 gives its children no controllers: start the listener in a cgroup of its own`,
      );
    throw error;
  }
}

function writeIfPresent(file: string, value: string): void {
  if (existsSync(file)) writeFileSync(file, value);
}

/** The value of `name` in a "key value" file (memory.oom_control, memory.events, pids.events), 0 when unreadable. */
function counter(file: string, name: string): number {
  try {
    const line = readFileSync(file, "utf8")
      .split("\n")
      .find((entry) => entry.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) || 0 : 0;
  } catch {
    return 0;
  }
}

/** Mountinfo escapes spaces and the like as octal. */
function unescapeMountinfo(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

function removeNow(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Removed with the deployment or at the next start.
  }
}

/** Removes a cgroup and those below it, deepest first, after killing what runs in them; quietly leaves what will not go. */
async function removeTree(dir: string): Promise<void> {
  let entries: string[];
  try {
    entries = (await readdir(dir, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch {
    return; // gone already
  }
  await Promise.all(entries.map((name) => removeTree(join(dir, name))));
  for (let attempt = 0; attempt < REMOVE_TRIES; attempt += 1) {
    await killMembers(dir);
    try {
      await rmdir(dir);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      if (code !== "EBUSY") return;
    }
    await new Promise((resolve) => setTimeout(resolve, REMOVE_INTERVAL_MS));
  }
}

async function killMembers(dir: string): Promise<void> {
  const text = await readFile(join(dir, "cgroup.procs"), "utf8").catch(() => "");
  for (const pid of text.split("\n").filter(Boolean).map(Number)) {
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/** The roots a previous start recorded (its cgroup may have been another), with what still runs there. */
async function removeRecorded(recordFile: string): Promise<void> {
  const text = await readFile(recordFile, "utf8").catch(() => "");
  const roots = text.split("\n").filter((line) => /\/berth-[\w-]+$/.test(line) && line.startsWith("/sys/fs/cgroup/"));
  await Promise.all(roots.map((root) => removeTree(root)));
}
