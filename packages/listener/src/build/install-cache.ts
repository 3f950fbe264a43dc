import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, linkSync, lstatSync, mkdirSync, readdirSync, readlinkSync, symlinkSync } from "node:fs";
import { mkdir, rename, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";

/**
 * Installed `node_modules` trees, one per cache key: `<cacheDir>/<key>/node_modules`.
 *
 * A hit is materialized as a *hard-link copy*: a real `node_modules`
 * directory inside the artifact whose files are hard links to the cached ones
 * (symbolic links inside the tree are recreated as they are). Not a symlink
 * `node_modules -> cache`, because
 * - Node resolves modules from their real path: through a symlinked
 *   node_modules, relative links inside it (a `file:` dependency is installed
 *   as `node_modules/dep -> ../libs/dep`) would be followed from the cache,
 *   where `libs/` does not exist; with a real directory, every link resolves
 *   exactly as after a fresh install, and each package's dependencies are
 *   found in the artifact's node_modules, not in a shared one;
 * - the artifact stays valid when the cache entry is deleted (cleanup, disk
 *   pressure): a hard link keeps the file alive;
 * - writes into the artifact's node_modules (tool caches like
 *   node_modules/.cache) create files in the artifact's own directories,
 *   not in the cache.
 * A hard link costs one directory entry per file (no data copied). The one
 * thing it does not isolate is a process rewriting an existing file of
 * node_modules in place (a build_command patching a dependency): that would
 * change the cached copy too. pnpm hard-links from its store the same way
 * and accepts the same risk; tools write new files rather than rewrite installed ones.
 * Sandboxed builds cannot: a published entry is sealed (root's, read-only to
 * every build user), so no deployment can change another's node_modules.
 * Across file systems, where hard links are impossible, files are copied.
 */
export class InstallCache {
  constructor(private readonly dir: string) {}

  /** Where the entry of `key` is (or would be). */
  entry(key: string): string {
    return join(this.dir, key);
  }

  /** Copies (by hard links) the cached node_modules of `key` to `target`; false when there is none. */
  async restore(key: string, target: string): Promise<boolean> {
    const entry = this.entry(key);
    const source = join(entry, "node_modules");
    if (!(await isDirectory(source))) return false;
    await linkTree(source, target);
    // Recency, for whoever evicts old entries by mtime.
    const now = new Date();
    await utimes(entry, now, now).catch(() => undefined);
    return true;
  }

  /**
   * Publishes `source` (a freshly installed node_modules) under `key`. It is
   * linked into a private temporary directory first, then renamed into place:
   * the rename is atomic, so a reader sees a complete entry or none, and when
   * two builds publish the same key at once, one rename wins and the other
   * build discards its copy. Returns false when another build won.
   */
  async publish(key: string, source: string): Promise<boolean> {
    await mkdir(this.dir, { recursive: true });
    const temp = join(this.dir, `.tmp-${key.slice(0, 12)}-${randomBytes(6).toString("hex")}`);
    try {
      await mkdir(temp);
      // Build-tool caches are the artifact's business, not the install's.
      await linkTree(source, join(temp, "node_modules"), (name, depth) => !(depth === 0 && name === ".cache"));
      try {
        await rename(temp, this.entry(key));
        return true;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOTEMPTY" || code === "EEXIST") return false;
        throw error;
      }
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Entries linked between two turns of the event loop: the listener's router keeps serving during a restore. */
const ENTRIES_PER_TURN = 128;

/**
 * Recreates the tree `source` at `target`: directories made, files
 * hard-linked (copied across devices), symlinks recreated verbatim.
 * Synchronous calls in short slices: a restore (thousands of entries) is on
 * the critical path of every re-deploy, and one promise per entry through
 * libuv's thread pool takes about twice the time and CPU.
 */
async function linkTree(
  source: string,
  target: string,
  include: (name: string, depth: number) => boolean = () => true,
): Promise<void> {
  const pending = [{ from: source, to: target, depth: 0 }];
  let linked = 0;
  for (let dir = pending.pop(); dir; dir = pending.pop()) {
    mkdirSync(dir.to, { recursive: true });
    for (const entry of readdirSync(dir.from, { withFileTypes: true })) {
      if (!include(entry.name, dir.depth)) continue;
      const from = join(dir.from, entry.name);
      const to = join(dir.to, entry.name);
      if (entry.isDirectory()) pending.push({ from, to, depth: dir.depth + 1 });
      else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
      else if (entry.isFile()) linkFile(from, to);
      // Sockets, FIFOs: nothing an install should leave behind; skipped.
      if (++linked % ENTRIES_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

function linkFile(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EXDEV" && code !== "EPERM" && code !== "EMLINK") throw error;
    copyFileSync(from, to);
    // copyFileSync keeps the content, not the executable bit of bin scripts.
    chmodSync(to, lstatSync(from).mode & 0o777);
  }
}
