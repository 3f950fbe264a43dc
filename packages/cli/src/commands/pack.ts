import { closeSync, existsSync, lstatSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";
import * as tar from "tar";

/** Never packed: the build installs dependencies itself, and these are local state. */
const ALWAYS_SKIPPED = new Set([".git", "node_modules", ".berth"]);
export const WARN_BYTES = 50 * 1024 * 1024;
/** The control plane's default upload limit (BERTH_UPLOAD_MAX_BYTES). */
export const MAX_BYTES = 200 * 1024 * 1024;

export interface Refusal {
  path: string;
  reason: string;
}

export interface ProjectFiles {
  files: string[];
  refused: Refusal[];
}

interface GitIgnore {
  /** The folder of the .gitignore, relative to the project ("" for its root). */
  base: string;
  rules: Ignore;
}

const ENV_FILE = /^\.env(\..+)?$/;
const ENV_ALLOWED = new Set([".env.example"]);
const KEY_FILE = /^id_(rsa|dsa|ecdsa|ed25519)/;
const PRIVATE_KEY_HEADER = /^\s*-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;

/** Why a file must not leave the machine, or undefined when it may. */
function refusalOf(absolute: string, name: string): string | undefined {
  if (ENV_FILE.test(name) && !ENV_ALLOWED.has(name)) return "an environment file (secrets go in the deployment's secrets)";
  if (name.endsWith(".pem") || (KEY_FILE.test(name) && !name.endsWith(".pub"))) return "a private key";
  const head = Buffer.alloc(64);
  const fd = openSync(absolute, "r");
  try {
    const read = readSync(fd, head, 0, head.length, 0);
    if (PRIVATE_KEY_HEADER.test(head.subarray(0, read).toString("latin1"))) return "a private key";
  } finally {
    closeSync(fd);
  }
  return undefined;
}

function ignored(stack: GitIgnore[], path: string, isDirectory: boolean): boolean {
  return stack.some(({ base, rules }) => {
    const inside = base === "" ? path : path.slice(base.length + 1);
    return rules.ignores(isDirectory ? `${inside}/` : inside);
  });
}

/**
 * The files `berth deploy` would upload (paths relative to `root`, `/`-separated),
 * honouring every .gitignore on the way down, and those it refuses to send.
 */
export function listProject(root: string): ProjectFiles {
  const files: string[] = [];
  const refused: Refusal[] = [];
  const walk = (dir: string, stack: GitIgnore[]) => {
    const here = relative(root, dir).split(sep).join("/");
    const gitignore = join(dir, ".gitignore");
    const scoped = existsSync(gitignore)
      ? [...stack, { base: here, rules: ignore().add(readFileSync(gitignore, "utf8")) }]
      : stack;
    for (const name of readdirSync(dir).sort()) {
      if (ALWAYS_SKIPPED.has(name)) continue;
      const absolute = join(dir, name);
      const path = here === "" ? name : `${here}/${name}`;
      const stat = lstatSync(absolute);
      if (ignored(scoped, path, stat.isDirectory())) continue;
      if (stat.isSymbolicLink()) refused.push({ path, reason: "a symbolic link (copy the file in instead)" });
      else if (stat.isDirectory()) walk(absolute, scoped);
      else if (stat.isFile()) {
        const reason = refusalOf(absolute, name);
        if (reason) refused.push({ path, reason });
        else files.push(path);
      }
    }
  };
  walk(root, []);
  return { files, refused };
}

/** A gzipped tarball of `files` under `root`, in memory; undefined when it would be over MAX_BYTES. */
export async function packTarball(root: string, files: string[]): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of tar.c({ gzip: true, cwd: root, portable: true, noDirRecurse: true }, files)) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    // Packing stops as soon as the tarball is too big to upload.
    if (size > MAX_BYTES) return undefined;
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}
