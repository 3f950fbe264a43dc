import { randomInt } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SandboxUser } from "./bwrap-args.js";

/** Each listener draws a block of this many uids from [FIRST_UID, FIRST_UID + BLOCKS * BLOCK_SIZE), below 2^31. */
const FIRST_UID = 1_000_000_000;
const BLOCK_SIZE = 65_536;
const BLOCKS = 15_258;
/** Where a deployment's uid is kept: in its own directory, so it goes when the deployment is torn down. */
const UID_FILE = "sandbox-uid";

/**
 * The users deployments run as: one uid (and a gid of the same number) per
 * deployment, the same for all its revisions and builds, never that of
 * another deployment while it exists.
 *
 * The listener's block of uids is chosen at random on its first start and
 * kept (`<dir>/uid-block`), so that listeners sharing a machine (several
 * control planes, a remote listener beside an embedded one) do not hand out
 * the same uids. Its first uid is the probe's (see probe.ts), never a
 * deployment's. None of these uids needs an entry in the host's /etc/passwd.
 */
export class SandboxUsers {
  private allocating: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly deploymentsDir: string,
    readonly probeUid: number,
  ) {}

  static async open(dir: string, deploymentsDir: string): Promise<SandboxUsers> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, "uid-block");
    let block = Number.parseInt(await readFile(file, "utf8").catch(() => ""), 10);
    if (!Number.isInteger(block) || block < 0 || block >= BLOCKS) {
      block = randomInt(BLOCKS);
      await writeFile(file, `${block}\n`, { mode: 0o600 });
    }
    return new SandboxUsers(deploymentsDir, FIRST_UID + block * BLOCK_SIZE);
  }

  /** The deployment's user, allocated on first use (one allocation at a time: two must not pick the same free uid). */
  userOf(deploymentId: string): Promise<SandboxUser> {
    const next = this.allocating.then(() => this.allocate(deploymentId));
    this.allocating = next.catch(() => undefined);
    return next;
  }

  private async allocate(deploymentId: string): Promise<SandboxUser> {
    const dir = join(this.deploymentsDir, deploymentId);
    const known = await readUid(join(dir, UID_FILE));
    if (known !== undefined) return { uid: known, gid: known };
    const used = new Set<number>();
    for (const other of await readdir(this.deploymentsDir).catch(() => [])) {
      const uid = await readUid(join(this.deploymentsDir, other, UID_FILE));
      if (uid !== undefined) used.add(uid);
    }
    let uid = this.probeUid + 1;
    while (used.has(uid)) uid += 1;
    if (uid >= this.probeUid + BLOCK_SIZE)
      throw new Error(`this listener has no free sandbox uid left (${BLOCK_SIZE - 1} deployments)`);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(join(dir, UID_FILE), `${uid}\n`, { mode: 0o600 });
    return { uid, gid: uid };
  }
}

async function readUid(file: string): Promise<number | undefined> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  const uid = text === undefined ? Number.NaN : Number.parseInt(text, 10);
  return Number.isInteger(uid) && uid > 0 ? uid : undefined;
}
