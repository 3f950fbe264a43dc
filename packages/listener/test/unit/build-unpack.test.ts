import assert from "node:assert/strict";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import { Header, type HeaderData } from "tar";
import { BuildError } from "../../src/build/errors.js";
import { safeUnpack } from "../../src/build/safe-unpack.js";

const scratch = mkdtempSync(join(tmpdir(), "berth-unpack-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

let counter = 0;
function fresh(): { dir: string; file: string } {
  counter += 1;
  return { dir: mkdtempSync(join(scratch, `out-${counter}-`)), file: join(scratch, `in-${counter}.tar.gz`) };
}

interface RawEntry extends HeaderData {
  path: string;
  body?: string;
}

/** A gzip tarball written header by header, so it can hold what no well-behaved tar tool would write. */
function rawTarball(entries: RawEntry[], trailing = 0): Buffer {
  const blocks: Buffer[] = [];
  for (const { body = "", ...data } of entries) {
    const content = Buffer.from(body);
    const block = Buffer.alloc(512);
    new Header({ mode: 0o644, uid: 1234, gid: 1234, mtime: new Date(0), type: "File", ...data, size: content.length }).encode(
      block,
      0,
    );
    blocks.push(block);
    if (content.length > 0) blocks.push(content, Buffer.alloc((512 - (content.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024 + trailing));
  return gzipSync(Buffer.concat(blocks));
}

async function unpack(entries: RawEntry[], limits = {}, trailing = 0): Promise<string> {
  const { dir, file } = fresh();
  writeFileSync(file, rawTarball(entries, trailing));
  await safeUnpack(file, dir, limits);
  return dir;
}

async function refusal(entries: RawEntry[], pattern: RegExp, limits = {}, trailing = 0): Promise<void> {
  const { dir, file } = fresh();
  writeFileSync(file, rawTarball(entries, trailing));
  await assert.rejects(safeUnpack(file, dir, limits), (error: unknown) => {
    assert.ok(error instanceof BuildError, `expected a BuildError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  });
  // The archive is checked in full before anything is written.
  assert.deepEqual(readdirSync(dir), []);
}

describe("safeUnpack", () => {
  test("unpacks files, directories and links that stay inside", async () => {
    const dir = await unpack([
      { path: "./", type: "Directory", mode: 0o755 },
      { path: "./src/", type: "Directory", mode: 0o755 },
      { path: "./src/a.ts", body: "export const a = 1;\n" },
      { path: "./src/link.ts", type: "SymbolicLink", linkpath: "../other.ts" },
      { path: "./other.ts", body: "export {};\n" },
      { path: "./hard.ts", type: "Link", linkpath: "src/a.ts" },
      { path: "./setuid", body: "#!/bin/sh\n", mode: 0o4755 },
    ]);
    assert.equal(readFileSync(join(dir, "src/a.ts"), "utf8"), "export const a = 1;\n");
    assert.equal(readlinkSync(join(dir, "src/link.ts")), "../other.ts");
    assert.equal(readFileSync(join(dir, "hard.ts"), "utf8"), "export const a = 1;\n");
    assert.equal(statSync(join(dir, "setuid")).mode & 0o7777, 0o755, "setuid bit dropped");
    assert.equal(lstatSync(join(dir, "src/a.ts")).uid, process.getuid?.(), "owned by the listener, not the archive's uid");
  });

  test("refuses a .. segment, naming the entry", async () => {
    await refusal(
      [
        { path: "ok.txt", body: "x" },
        { path: "../evil.txt", body: "x" },
      ],
      /entry "\.\.\/evil\.txt" has a "\.\." segment/,
    );
    await refusal([{ path: "a/../../evil.txt", body: "x" }], /entry "a\/\.\.\/\.\.\/evil\.txt" has a "\.\." segment/);
  });

  test("refuses an absolute path", async () => {
    await refusal([{ path: "/etc/evil.conf", body: "x" }], /entry "\/etc\/evil\.conf" has an absolute path/);
  });

  test("refuses symbolic links leading outside", async () => {
    await refusal(
      [{ path: "escape", type: "SymbolicLink", linkpath: "../../etc/passwd" }],
      /symbolic link "escape" -> "\.\.\/\.\.\/etc\/passwd" points outside/,
    );
    await refusal(
      [{ path: "abs", type: "SymbolicLink", linkpath: "/etc/passwd" }],
      /symbolic link "abs" points to the absolute path/,
    );
    // Each link alone looks harmless; followed together they reach the parent directory.
    await refusal(
      [
        { path: "d/up", type: "SymbolicLink", linkpath: ".." },
        { path: "a", type: "SymbolicLink", linkpath: "d/up/.." },
      ],
      /symbolic link "a" -> "d\/up\/\.\." points outside/,
    );
    await refusal(
      [
        { path: "lnk", type: "SymbolicLink", linkpath: "sub" },
        { path: "lnk/file", body: "x" },
      ],
      /entry "lnk\/file" lies under the symbolic link "lnk"/,
    );
  });

  test("refuses hard links to anything but an earlier file of the archive", async () => {
    await refusal([{ path: "h", type: "Link", linkpath: "../outside" }], /hard link "h" -> "\.\.\/outside" has a "\.\." segment/);
    await refusal([{ path: "h", type: "Link", linkpath: "/etc/shadow" }], /has an absolute path/);
    await refusal(
      [
        { path: "h", type: "Link", linkpath: "later.txt" },
        { path: "later.txt", body: "x" },
      ],
      /does not point to a file stored earlier/,
    );
  });

  test("refuses devices and FIFOs", async () => {
    await refusal([{ path: "null", type: "CharacterDevice", devmaj: 1, devmin: 3 }], /entry "null" is a CharacterDevice/);
    await refusal([{ path: "pipe", type: "FIFO" }], /entry "pipe" is a FIFO/);
  });

  test("bounds entries and bytes", async () => {
    const three = [
      { path: "a", body: "1" },
      { path: "b", body: "2" },
      { path: "c", body: "3" },
    ];
    await refusal(three, /it has more than 2 entries/, { maxEntries: 2 });
    await refusal([{ path: "big", body: "12345678901" }], /it unpacks to more than 10 bytes/, { maxBytes: 10 });
    // Bytes the headers do not declare (here, padding) count too, so a gzip bomb stops early.
    await refusal([{ path: "a", body: "1" }], /it unpacks to more than 10 bytes/, { maxBytes: 10, maxEntries: 1 }, 1024 * 1024);
  });

  test("refuses what is not a gzip tarball", async () => {
    const cases: Array<[Buffer, RegExp]> = [
      [Buffer.from("just some text\n"), /not a gzip file/],
      [rawTarball([{ path: "a.txt", body: "hello" }]).subarray(0, 30), /corrupt/],
      [gzipSync(Buffer.from("not a tar archive at all")), /could not be unpacked/],
    ];
    for (const [bytes, pattern] of cases) {
      const { dir, file } = fresh();
      writeFileSync(file, bytes);
      await assert.rejects(safeUnpack(file, dir), (error: unknown) => error instanceof BuildError && pattern.test(error.message));
    }
  });
});
