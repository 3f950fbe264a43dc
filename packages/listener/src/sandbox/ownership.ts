import type { Dirent } from "node:fs";
import { chmod, chown, lchown, lstat, mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { SandboxUser } from "./bwrap-args.js";

type Kind = "directory" | "file" | "symlink" | "other";

/** A directory only `user` may enter (created when missing), its parents created as root-only directories. */
export async function privateDir(path: string, user: SandboxUser): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  await chown(path, user.uid, user.gid);
  await chmod(path, 0o700);
}

/**
 * Gives `user` the tree at `path` (links themselves, never what they point
 * to). With `directoriesOnly`, files keep their owner: node_modules restored
 * from the install cache are hard links shared with the cache and with other
 * builds, and chowning a file would chown every link to it.
 */
export function handOver(path: string, user: SandboxUser, directoriesOnly = false): Promise<void> {
  return eachEntry(path, "directory", async (entry, kind) => {
    if (kind === "directory" || kind === "symlink" || !directoriesOnly) await lchown(entry, user.uid, user.gid);
  });
}

/**
 * Takes the tree at `path` back from the build's user: owned by root,
 * readable by everyone, writable by root only. For an install published to
 * the cache: its files are hard links in the installing build too, which
 * could otherwise rewrite them in place under every build restoring them.
 */
export function seal(path: string): Promise<void> {
  return eachEntry(path, "directory", async (entry, kind) => {
    await lchown(entry, 0, 0);
    if (kind === "directory") await chmod(entry, 0o755);
    else if (kind === "file") await chmod(entry, (await lstat(entry)).mode & 0o111 ? 0o755 : 0o644);
  });
}

/** Calls `visit` on `path` and everything under it (not following links). */
async function eachEntry(path: string, kind: Kind, visit: (path: string, kind: Kind) => Promise<void>): Promise<void> {
  await visit(path, kind);
  if (kind !== "directory") return;
  const entries = await readdir(path, { withFileTypes: true });
  // One directory's entries at a time in parallel: the fs work queues on libuv's small thread pool anyway.
  await Promise.all(entries.map((entry) => eachEntry(join(path, entry.name), kindOf(entry), visit)));
}

function kindOf(entry: Dirent): Kind {
  if (entry.isDirectory()) return "directory";
  if (entry.isSymbolicLink()) return "symlink";
  return entry.isFile() ? "file" : "other";
}
