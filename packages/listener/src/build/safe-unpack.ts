import { createReadStream } from "node:fs";
import { open, readdir } from "node:fs/promises";
import { Transform, type TransformCallback } from "node:stream";
import { createGunzip } from "node:zlib";
import { Parser, type ReadEntry, Unpack } from "tar";
import { ArchiveIndex, formatBytes, refused } from "./archive-rules.js";
import { BuildError } from "./errors.js";

export interface UnpackLimits {
  /** Total size of the files, as the archive declares them. Default 1 GiB. */
  maxBytes?: number;
  /** Entries of any kind. Default 20,000. */
  maxEntries?: number;
}

export interface UnpackResult {
  entries: number;
  bytes: number;
}

export const DEFAULT_MAX_BYTES = 1024 ** 3;
export const DEFAULT_MAX_ENTRIES = 20_000;

/** Room for tar's own bytes (a 512-byte header and padding per entry, long-name and pax blocks) above the files' sizes. */
const TAR_OVERHEAD_PER_ENTRY = 4096;

/**
 * Unpacks a gzip tarball into `root` (an existing, empty directory), refusing
 * with a BuildError anything unsafe: see ArchiveIndex for the rules.
 *
 * Two passes over the file: the first reads every header without writing, so
 * a refused archive leaves `root` empty; the second extracts, re-checking
 * each entry with a fresh index (cheap, and it does not trust that the file
 * is unchanged between passes). Decompression is ours, counted against the
 * limits, so a gzip bomb stops at the limit instead of filling memory or disk.
 */
export async function safeUnpack(
  tarball: string,
  root: string,
  limits: UnpackLimits = {},
  signal?: AbortSignal,
): Promise<UnpackResult> {
  const bounds = { maxBytes: limits.maxBytes ?? DEFAULT_MAX_BYTES, maxEntries: limits.maxEntries ?? DEFAULT_MAX_ENTRIES };
  if ((await readdir(root)).length > 0) throw new Error(`safeUnpack needs an empty directory, and ${root} is not empty`);
  await checkGzipMagic(tarball);

  const scan = new ArchiveIndex(bounds);
  const lister = new Parser({ strict: true });
  lister.on("entry", (entry: ReadEntry) => {
    try {
      scan.add(entry);
    } catch (error) {
      lister.abort(error as Error);
    }
    entry.resume();
  });
  await feed(tarball, lister, bounds, signal);
  scan.finish();

  const extractIndex = new ArchiveIndex(bounds);
  const unpack: Unpack = new Unpack({
    cwd: root,
    strict: true,
    // As root, node-tar would give files the archive's owners by default.
    preserveOwner: false,
    filter: (_path, entry) => {
      const read = entry as ReadEntry;
      try {
        extractIndex.add(read);
      } catch (error) {
        unpack.abort(error as Error);
        return false;
      }
      // No setuid/setgid/sticky bits from an upload, and the owner may always
      // read and write, so the build can change files and the directory can be deleted.
      if (typeof read.mode === "number") read.mode = (read.mode & 0o777) | (read.type === "Directory" ? 0o700 : 0o600);
      return true;
    },
  });
  await feed(tarball, unpack, bounds, signal);
  extractIndex.finish();
  return { entries: scan.entries, bytes: scan.bytes };
}

async function checkGzipMagic(tarball: string): Promise<void> {
  const handle = await open(tarball, "r");
  try {
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(2), 0, 2, 0);
    if (bytesRead < 2 || buffer[0] !== 0x1f || buffer[1] !== 0x8b) {
      throw new BuildError("The source tarball is not a gzip file (expected a .tar.gz)");
    }
  } finally {
    await handle.close();
  }
}

/**
 * Streams the decompressed tarball into a node-tar Parser (or Unpack) and
 * waits for it to close. Any failure, wherever it happens, becomes one
 * rejection: refusals stay BuildErrors, corruption becomes a BuildError too.
 */
function feed(
  tarball: string,
  parser: Parser,
  limits: { maxBytes: number; maxEntries: number },
  signal?: AbortSignal,
): Promise<void> {
  const maxTarBytes = limits.maxBytes + (limits.maxEntries + 2) * TAR_OVERHEAD_PER_ENTRY;
  return new Promise<void>((resolve, reject) => {
    const file = createReadStream(tarball);
    const gunzip = createGunzip();
    const counter = new ByteCounter(maxTarBytes);
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      file.destroy();
      gunzip.destroy();
      counter.destroy();
      reject(asBuildError(error, limits));
    };
    const onAbort = () => fail(new BuildError("The build was interrupted while unpacking the source"));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    parser.on("error", fail);
    parser.on("abort", fail);
    parser.on("close", () => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    file.on("error", fail);
    gunzip.on("error", fail);
    counter.on("error", fail);
    // node-tar's Parser is a writable-like emitter (write/end/drain), which pipe() supports.
    file
      .pipe(gunzip)
      .pipe(counter)
      .pipe(parser as unknown as NodeJS.WritableStream);
  });
}

class TooLarge extends Error {}

/** Passes bytes through, failing once more than `max` went by. */
class ByteCounter extends Transform {
  private seen = 0;

  constructor(private readonly max: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.max) {
      callback(new TooLarge());
      return;
    }
    callback(null, chunk);
  }
}

function asBuildError(error: unknown, limits: { maxBytes: number }): BuildError {
  if (error instanceof BuildError) return error;
  if (error instanceof TooLarge) return refused(`it unpacks to more than ${formatBytes(limits.maxBytes)}`);
  const err = error as NodeJS.ErrnoException & { tarCode?: string };
  // node-tar wraps a refusal raised inside `filter`/`entry` into its TAR_ABORT warning.
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof BuildError) return cause;
  if (err.code?.startsWith("Z_") || /incorrect header check|unexpected end of file|invalid/i.test(err.message ?? "")) {
    return new BuildError(`The source tarball is corrupt: ${err.message}`);
  }
  if (err.tarCode || err.code?.startsWith("TAR_")) {
    return new BuildError(`The source tarball could not be unpacked: ${err.message.replace(/^TAR_[A-Z_]+: /, "")}`);
  }
  return new BuildError(`Unpacking the source tarball failed: ${err.message ?? String(error)}`);
}
