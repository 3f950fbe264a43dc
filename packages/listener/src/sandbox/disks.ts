import { execFile, execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, rename, rm, rmdir, statfs, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { findProgram } from "./programs.js";

const run = promisify(execFile);

/** A deployment's disks: its database directory and its /tmp. */
export type DiskName = "data" | "tmp";

/** How big each disk is made (fixed when made). */
export type DiskSizes = Record<DiskName, number>;

export type DiskSupport = { available: true; disks: DeploymentDisks } | { available: false; reason: string };

/** Where each disk is seen in a sandbox, for messages. */
const INSIDE: Record<DiskName, string> = { data: "/data", tmp: "/tmp" };
/** Room left over what a directory moved onto a new disk already holds. */
const MIGRATION_SLACK_MB = 64;
/** A disk with less free than this (or 1% of it) counts as full when a process ends. */
const FULL_BELOW_BYTES = 1024 * 1024;
const COMMAND_TIMEOUT_MS = 60_000;

/**
 * Each deployment's /data and /tmp as ext4 file systems of a fixed size, in
 * sparse image files (`<deployment>/disks/<name>.img`, the listener's only)
 * loop-mounted on the directories the sandbox binds (`<deployment>/data`,
 * `<deployment>/tmp`): they persist like those directories did, and a
 * deployment that fills one gets ENOSPC there, not the host. The listener
 * mounts a deployment's disks when a build or server of it starts, and
 * unmounts them when it is deleted or the listener stops.
 */
export class DeploymentDisks {
  /** One mount at a time per deployment (a build and a server may start together). */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Set once the listener stops: a build still starting must not mount anything after the last unmount. */
  private closed = false;

  private constructor(
    private readonly deploymentsDir: string,
    private readonly tools: { mkfs: string; mount: string; umount: string },
  ) {}

  /**
   * Whether disks can be had (root, mkfs.ext4, loop devices): tries one in
   * `stateDir`. Unmounts what a previous listener left mounted.
   */
  static async open(deploymentsDir: string, stateDir: string): Promise<DiskSupport> {
    const unavailable = (reason: string): DiskSupport => ({ available: false, reason });
    if (process.platform !== "linux") return unavailable("loop-mounted disks need Linux");
    if (process.getuid?.() !== 0) return unavailable("the listener does not run as root");
    const mkfs = findProgram("mkfs.ext4");
    const mount = findProgram("mount");
    const umount = findProgram("umount");
    if (!mkfs || !mount || !umount) return unavailable("mkfs.ext4, mount or umount is not installed");
    if (!existsSync("/dev/loop-control")) return unavailable("the kernel offers no loop devices (/dev/loop-control)");
    const disks = new DeploymentDisks(deploymentsDir, { mkfs, mount, umount });
    await disks.releaseAll();
    const image = join(stateDir, "disk-probe.img");
    const point = join(stateDir, "disk-probe");
    try {
      await disks.unmount(point);
      await disks.make(image, 16);
      await mkdir(point, { recursive: true, mode: 0o700 });
      await disks.mountOn(image, point);
      await disks.unmount(point);
      return { available: true, disks };
    } catch (error) {
      return unavailable(`a test disk failed: ${firstLine(error)}`);
    } finally {
      await disks.unmount(point).catch(() => {});
      await rm(point, { recursive: true, force: true });
      await rm(image, { force: true });
    }
  }

  /** Mounts the deployment's disks `names` (made on first use, `sizes` in MiB) unless mounted already. */
  ensure(deploymentId: string, names: readonly DiskName[], sizes: DiskSizes): Promise<void> {
    return this.queued(deploymentId, async () => {
      if (this.closed) throw new Error("the listener is stopping");
      for (const name of names) await this.ensureOne(deploymentId, name, sizes[name]);
    });
  }

  /** Unmounts the deployment's disks (it is deleted: the images go with its directory). */
  release(deploymentId: string): Promise<void> {
    return this.queued(deploymentId, async () => {
      const dir = join(this.deploymentsDir, deploymentId);
      for (const point of await mountsUnder(dir)) await this.unmount(point);
    });
  }

  /** Unmounts every deployment's disks (the listener starts after one that could not clean up). */
  async releaseAll(): Promise<void> {
    for (const point of await mountsUnder(this.deploymentsDir)) await this.unmount(point);
  }

  /**
   * Detaches every deployment's disks at once (synchronously: the listener
   * exits without having stopped cleanly); they are freed when the last
   * process using them is gone.
   */
  releaseAllNow(): void {
    this.closed = true;
    const points = parseMountPoints(readFileSync("/proc/self/mountinfo", "utf8"));
    for (const point of under(points, this.deploymentsDir)) {
      try {
        execFileSync(this.tools.umount, ["-l", point], { stdio: "ignore", timeout: 5000 });
      } catch {
        // Unmounted at its next start.
      }
    }
  }

  /** Unmounts every deployment's disks, once what is being mounted is, and mounts nothing more (the listener stops). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.queues.values());
    await this.releaseAll();
  }

  /** Those of the deployment's disks `names` that are full, as `/data (512 MiB)`. */
  async full(deploymentId: string, names: readonly DiskName[]): Promise<string[]> {
    const full: string[] = [];
    for (const name of names) {
      const point = join(this.deploymentsDir, deploymentId, name);
      if (!(await isMountPoint(point))) continue;
      const stats = await statfs(point).catch(() => undefined);
      if (!stats) continue;
      const size = stats.blocks * stats.bsize;
      if (stats.bavail * stats.bsize < Math.max(FULL_BELOW_BYTES, size / 100))
        full.push(`${INSIDE[name]} (${Math.round(size / 1024 / 1024)} MiB)`);
    }
    return full;
  }

  private async ensureOne(deploymentId: string, name: DiskName, sizeMb: number): Promise<void> {
    const deploymentDir = join(this.deploymentsDir, deploymentId);
    const point = join(deploymentDir, name);
    if (await isMountPoint(point)) return;
    const imagesDir = join(deploymentDir, "disks");
    const image = join(imagesDir, `${name}.img`);
    await mkdir(imagesDir, { recursive: true, mode: 0o700 });
    const leftover = await contentSize(point);
    if (!existsSync(image)) {
      // A deployment from before disks: its database moves onto the new disk, which must hold it.
      const keep = name === "data" ? leftover : 0;
      await this.make(image, Math.max(sizeMb, Math.ceil((keep * 1.25) / 1024 / 1024) + MIGRATION_SLACK_MB * (keep > 0 ? 1 : 0)));
    }
    if (leftover > 0) {
      if (name === "data") await this.moveOnto(point, image, join(imagesDir, `${name}.staging`));
      // /tmp holds caches only.
      else await rm(point, { recursive: true, force: true });
    }
    await mkdir(point, { recursive: true, mode: 0o700 });
    await this.mountOn(image, point);
  }

  /** Copies what `dir` holds onto the disk in `image`, then empties `dir`. */
  private async moveOnto(dir: string, image: string, staging: string): Promise<void> {
    await mkdir(staging, { recursive: true, mode: 0o700 });
    await this.mountOn(image, staging);
    try {
      await run("cp", ["-a", `${dir}/.`, `${staging}/`], { timeout: COMMAND_TIMEOUT_MS * 10 });
    } finally {
      await this.unmount(staging);
      await rmdir(staging).catch(() => {});
    }
    await rm(dir, { recursive: true, force: true });
  }

  private async make(image: string, sizeMb: number): Promise<void> {
    // Made aside and renamed once whole: a listener killed during mkfs must not leave an image that exists but holds
    // no file system.
    const partial = `${image}.partial`;
    // A sparse file: it takes disk space as the deployment writes, up to its size.
    await writeFile(partial, "", { mode: 0o600 });
    await truncate(partial, sizeMb * 1024 * 1024);
    // No blocks reserved for root (the deployment's user gets all of it); lazy init keeps making it quick.
    await run(this.tools.mkfs, ["-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1", partial], {
      timeout: COMMAND_TIMEOUT_MS,
    });
    await rename(partial, image);
  }

  private async mountOn(image: string, point: string): Promise<void> {
    // loop: a loop device, freed at unmount (autoclear); no device files or setuid programs on a deployment's disk.
    await run(this.tools.mount, ["-t", "ext4", "-o", "loop,nodev,nosuid,noatime", image, point], {
      timeout: COMMAND_TIMEOUT_MS,
    }).catch((error: { stderr?: string; message: string }) => {
      // mount's own words say why (the first line of the error only names the command).
      throw new Error(`mounting ${image} failed: ${error.stderr?.trim().replace(/\s+/g, " ") || error.message}`);
    });
    await rmdir(join(point, "lost+found")).catch(() => {});
  }

  private async unmount(point: string): Promise<void> {
    if (!(await isMountPoint(point))) return;
    try {
      await run(this.tools.umount, [point], { timeout: COMMAND_TIMEOUT_MS });
    } catch {
      // Still in use on the host (a file held open): detached now, freed when closed.
      await run(this.tools.umount, ["-l", point], { timeout: COMMAND_TIMEOUT_MS });
    }
  }

  private queued<T>(deploymentId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(deploymentId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.queues.set(deploymentId, settled);
    void settled.then(() => {
      if (this.queues.get(deploymentId) === settled) this.queues.delete(deploymentId);
    });
    return next;
  }
}

/** The mount points at or below `dir`, deepest first (from the listener's mount table). */
async function mountsUnder(dir: string): Promise<string[]> {
  return under(await mountPoints(), dir);
}

function under(points: string[], dir: string): string[] {
  return points.filter((point) => point === dir || point.startsWith(`${dir}/`)).sort((a, b) => b.length - a.length);
}

async function isMountPoint(path: string): Promise<boolean> {
  return (await mountPoints()).includes(path);
}

async function mountPoints(): Promise<string[]> {
  return parseMountPoints(await readFile("/proc/self/mountinfo", "utf8"));
}

function parseMountPoints(text: string): string[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) =>
      line.split(" ")[4]!.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8))),
    );
}

/** The bytes of the files under `dir` (0 when it is missing or empty). */
async function contentSize(dir: string): Promise<number> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  let total = 0;
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += (await contentSize(path)) + 4096;
    else total += (await lstat(path).catch(() => ({ size: 0 }))).size;
  }
  return total === 0 && entries.length > 0 ? 1 : total;
}

function firstLine(error: unknown): string {
  const stderr = (error as { stderr?: string }).stderr?.trim();
  return (stderr || (error as Error).message).split("\n")[0]!;
}
