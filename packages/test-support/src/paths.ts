import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The checkout's root. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** The `berth` command of this checkout. */
export const BERTH_BIN = join(REPO_ROOT, "packages", "cli", "bin", "berth.mjs");

/** A fresh empty directory under the OS temp dir (a data directory, a project copy). */
export function newDataDir(prefix = "berth-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
