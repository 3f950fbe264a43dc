import { posix } from "node:path";
import { BuildError } from "./errors.js";

/** What the rules need to know of one tar entry (a subset of node-tar's ReadEntry). */
export interface ArchiveEntry {
  path: string;
  type: string;
  size: number;
  linkpath?: string;
}

export interface ArchiveLimits {
  maxBytes: number;
  maxEntries: number;
}

/**
 * Entry types a project may contain. Devices and FIFOs have no business in a
 * source tarball (and would let an archive create device nodes when the
 * listener runs as root); anything exotic (sparse files, tape headers) is
 * refused rather than guessed at.
 */
const ALLOWED_TYPES = new Set(["File", "OldFile", "ContiguousFile", "Directory", "SymbolicLink", "Link"]);
const FILE_TYPES = new Set(["File", "OldFile", "ContiguousFile"]);
/** Linux's own limit on symlinks followed while resolving one path. */
const MAX_SYMLINK_HOPS = 40;

type Kind = "file" | "dir" | "symlink";

export function refused(reason: string): BuildError {
  return new BuildError(`The source tarball was refused: ${reason}`);
}

/**
 * The archive's entries, checked one by one as they are read, then as a whole
 * (`finish`). The rules are stricter than node-tar's defaults on purpose:
 * node-tar silently strips `..` and leading `/`, which would unpack something
 * other than what the user uploaded; we refuse instead, naming the entry.
 *
 * Since the target directory starts empty, the archive alone decides what
 * every path is, so link targets can be resolved exactly here, in memory,
 * before anything is written.
 */
export class ArchiveIndex {
  private readonly kinds = new Map<string, Kind>();
  private readonly symlinks = new Map<string, string>();
  entries = 0;
  bytes = 0;

  constructor(private readonly limits: ArchiveLimits) {}

  /** Checks one entry; throws a BuildError naming it when it is refused. Returns its normalized path ("" for the root). */
  add(entry: ArchiveEntry): string {
    this.entries += 1;
    if (this.entries > this.limits.maxEntries) {
      throw refused(`it has more than ${this.limits.maxEntries} entries`);
    }
    if (!ALLOWED_TYPES.has(entry.type)) {
      throw refused(`entry "${entry.path}" is a ${entry.type}; only files, directories and links are allowed`);
    }
    const path = checkEntryPath(entry.path, `entry "${entry.path}"`);
    if (path === "" && entry.type !== "Directory")
      throw refused(`entry "${entry.path}" would replace the project directory itself`);
    if (FILE_TYPES.has(entry.type)) {
      this.bytes += entry.size;
      if (this.bytes > this.limits.maxBytes) {
        throw refused(`it unpacks to more than ${formatBytes(this.limits.maxBytes)}`);
      }
    }
    this.claimAncestors(path, entry.path);
    const kind: Kind = entry.type === "Directory" ? "dir" : entry.type === "SymbolicLink" ? "symlink" : "file";
    const previous = this.kinds.get(path);
    // A path that changes kind mid-archive (a directory later replaced by a
    // symlink, say) would make the in-memory picture differ from the disk.
    if (previous !== undefined && previous !== kind) {
      throw refused(`entry "${entry.path}" appears twice, as a ${describe(previous)} and as a ${describe(kind)}`);
    }
    if (entry.type === "Link") this.checkHardLink(entry);
    if (entry.type === "SymbolicLink") {
      const target = entry.linkpath ?? "";
      if (target === "") throw refused(`symbolic link "${entry.path}" has no target`);
      if (isAbsolutePath(target)) throw refused(`symbolic link "${entry.path}" points to the absolute path "${target}"`);
      this.symlinks.set(path, target);
    }
    if (path !== "") this.kinds.set(path, kind);
    return path;
  }

  /**
   * Resolves every symbolic link through the archive's other links, the way
   * the kernel will: `a -> d/up/..` with `d/up -> ..` looks inside the root
   * when read alone, but lands in the root's parent.
   */
  finish(): void {
    for (const [path, target] of this.symlinks) {
      const segments = [...splitSegments(posix.dirname(path) === "." ? "" : posix.dirname(path)), ...splitSegments(target)];
      const current: string[] = [];
      let hops = 0;
      while (segments.length > 0) {
        const segment = segments.shift() as string;
        if (segment === "" || segment === ".") continue;
        if (segment === "..") {
          if (current.length === 0) throw refused(`symbolic link "${path}" -> "${target}" points outside the project directory`);
          current.pop();
          continue;
        }
        current.push(segment);
        const next = this.symlinks.get(current.join("/"));
        if (next === undefined) continue;
        hops += 1;
        if (hops > MAX_SYMLINK_HOPS) throw refused(`symbolic link "${path}" -> "${target}" is part of a loop of links`);
        if (isAbsolutePath(next)) throw refused(`symbolic link "${path}" -> "${target}" points outside the project directory`);
        current.pop();
        segments.unshift(...splitSegments(next));
      }
    }
  }

  /** Nothing may be written inside a file or through a symlink of the archive. */
  private claimAncestors(path: string, original: string): void {
    const segments = splitSegments(path);
    for (let depth = 1; depth < segments.length; depth += 1) {
      const ancestor = segments.slice(0, depth).join("/");
      const kind = this.kinds.get(ancestor);
      if (kind === "symlink") throw refused(`entry "${original}" lies under the symbolic link "${ancestor}"`);
      if (kind === "file") throw refused(`entry "${original}" lies under the file "${ancestor}"`);
      if (kind === undefined) this.kinds.set(ancestor, "dir");
    }
  }

  /**
   * A hard link's target is relative to the archive root and, in a well-formed
   * archive, is a file stored earlier. Requiring exactly that means a hard link
   * can never reach a file outside the root (which would expose it, e.g. the
   * listener's own keys, to the project).
   */
  private checkHardLink(entry: ArchiveEntry): void {
    const raw = entry.linkpath ?? "";
    if (raw === "") throw refused(`hard link "${entry.path}" has no target`);
    const target = checkEntryPath(raw, `hard link "${entry.path}" -> "${raw}"`);
    if (this.kinds.get(target) !== "file") {
      throw refused(`hard link "${entry.path}" -> "${raw}" does not point to a file stored earlier in the archive`);
    }
  }
}

/**
 * Normalizes an archive path ("./src/a.ts" → "src/a.ts", "./" → ""), refusing
 * absolute paths and any `..` segment. Backslashes count as separators for
 * this check: harmless on Linux, but such names only appear in hostile archives.
 */
export function checkEntryPath(raw: string, what: string): string {
  if (raw.includes("\0")) throw refused(`${what} has a NUL character in its path`);
  if (isAbsolutePath(raw)) throw refused(`${what} has an absolute path`);
  if (raw.split(/[\\/]/).includes("..")) throw refused(`${what} has a ".." segment (it would leave the project directory)`);
  const normalized = posix.normalize(raw).replace(/\/+$/, "");
  const path = normalized === "." ? "" : normalized.replace(/^\.\//, "");
  // Defense in depth: the checks above already guarantee this.
  const resolved = posix.resolve("/root", path);
  if (resolved !== "/root" && !resolved.startsWith("/root/")) throw refused(`${what} resolves outside the project directory`);
  return path;
}

function isAbsolutePath(path: string): boolean {
  return path.startsWith("/") || path.startsWith("\\") || /^[a-zA-Z]:/.test(path);
}

function splitSegments(path: string): string[] {
  return path === "" ? [] : path.split("/");
}

function describe(kind: Kind): string {
  return kind === "dir" ? "directory" : kind === "symlink" ? "symbolic link" : "file";
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(bytes % 1024 ** 3 === 0 ? 0 : 1)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}
