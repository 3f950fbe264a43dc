import { createTar, type TarFileInput } from "nanotar";

/**
 * Packs a folder the reader picked (`<input webkitdirectory>`) into the
 * gzipped tarball `berth deploy` would upload, refusing what the CLI refuses:
 * environment files and private keys never leave the machine, and
 * node_modules, .git and .berth are left out (the build installs
 * dependencies itself). Unlike the CLI it does not read .gitignore.
 */

const SKIPPED_FOLDERS = new Set([".git", "node_modules", ".berth"]);
const ENV_FILE = /^\.env(\..+)?$/;
const ENV_ALLOWED = new Set([".env.example"]);
const KEY_FILE = /^id_(rsa|dsa|ecdsa|ed25519)/;
const PRIVATE_KEY_HEADER = /^\s*-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;
/** The control plane's default upload limit (BERTH_UPLOAD_MAX_BYTES). */
export const MAX_BYTES = 200 * 1024 * 1024;
/** A ustar header holds a name of 100 bytes; longer ones would be cut. */
const MAX_NAME_BYTES = 100;
export const CONFIG = "langgraph.json";

export interface Refusal {
  path: string;
  reason: string;
}

export type Packed =
  | { ok: true; folder: string; tarball: Uint8Array; fileCount: number }
  | { ok: false; folder: string; problem: string; refused: Refusal[] };

function refusalOf(name: string, path: string, head: string): string | undefined {
  if (ENV_FILE.test(name) && !ENV_ALLOWED.has(name)) return "an environment file (secrets go in the deployment's secrets)";
  if (name.endsWith(".pem") || (KEY_FILE.test(name) && !name.endsWith(".pub"))) return "a private key";
  if (PRIVATE_KEY_HEADER.test(head)) return "a private key";
  if (new TextEncoder().encode(path).length > MAX_NAME_BYTES) return `a path over ${MAX_NAME_BYTES} bytes (use berth deploy)`;
  return undefined;
}

/** `folder/sub/file` → ["folder", "sub/file"]: the picked folder is the project's root. */
function splitRelative(file: File): [string, string] {
  const relative = file.webkitRelativePath || file.name;
  const at = relative.indexOf("/");
  return at < 0 ? ["", relative] : [relative.slice(0, at), relative.slice(at + 1)];
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export async function packFolder(picked: File[]): Promise<Packed> {
  const kept: { path: string; file: File }[] = [];
  let folder = "";
  for (const file of picked) {
    const [root, path] = splitRelative(file);
    folder ||= root;
    if (path.split("/").some((segment) => SKIPPED_FOLDERS.has(segment))) continue;
    kept.push({ path, file });
  }
  if (!kept.some(({ path }) => path === CONFIG)) {
    return { ok: false, folder, problem: `The folder has no ${CONFIG} at its top.`, refused: [] };
  }
  const size = kept.reduce((total, { file }) => total + file.size, 0);
  if (size > MAX_BYTES) {
    return {
      ok: false,
      folder,
      problem: `The folder holds over ${MAX_BYTES / (1024 * 1024)} MB, the upload limit.`,
      refused: [],
    };
  }
  const refused: Refusal[] = [];
  const entries: TarFileInput[] = [];
  for (const { path, file } of kept) {
    const data = new Uint8Array(await file.arrayBuffer());
    const head = new TextDecoder("latin1").decode(data.subarray(0, 64));
    const reason = refusalOf(path.slice(path.lastIndexOf("/") + 1), path, head);
    if (reason) refused.push({ path, reason });
    else entries.push({ name: path, data, attrs: { mode: "644", mtime: file.lastModified } });
  }
  if (refused.length > 0) {
    return { ok: false, folder, problem: `Refusing to upload ${refused.length} file(s); remove them from the folder:`, refused };
  }
  // Two zero blocks end the archive whatever the padding nanotar leaves.
  const tar = createTar(entries);
  const ended = new Uint8Array(tar.length + 1024);
  ended.set(tar);
  return { ok: true, folder, tarball: await gzip(ended), fileCount: entries.length };
}
