import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import * as tar from "tar";
import { parsedOrError } from "../process.js";
import { RESTORE_HELP } from "./backup-usage.js";
import { BACKUP_FORMAT, type BackupManifest, KEY_FILES, MANIFEST_NAME } from "./backup-contents.js";
import { fail } from "./output.js";

/** `berth restore <file> <data-dir>`: a backup unpacked into a new (or empty) data directory. */
export async function restoreCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({ args: argv, allowPositionals: true, options: { help: { type: "boolean", short: "h" } } }),
  );
  if (parsed instanceof Error) return fail("restore", `${parsed.message}\n\n${RESTORE_HELP}`, 2);
  if (parsed.values.help) {
    process.stdout.write(RESTORE_HELP);
    return 0;
  }
  if (parsed.positionals.length !== 2)
    return fail("restore", `expected a backup file and a data directory\n\n${RESTORE_HELP}`, 2);
  const [file, dataDir] = parsed.positionals.map((path) => resolve(path)) as [string, string];
  if (!existsSync(file)) return fail("restore", `${file} does not exist`);
  // Never mixed with what a directory holds: a restore makes the directory whole, or does nothing.
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    return fail("restore", `${dataDir} is not empty: restore into a new or empty directory (then point the server at it)`);
  }

  mkdirSync(dirname(dataDir), { recursive: true });
  const staging = mkdtempSync(join(dirname(dataDir), `.${basename(dataDir)}.restoring-`));
  try {
    // Entries are confined to the staging directory (tar refuses absolute paths and "..").
    await tar.x({ file, cwd: staging, strict: true });
    const manifest = readManifest(staging);
    if (typeof manifest === "string") return fail("restore", `${file}: ${manifest}`);
    const missing = [...manifest.databases, ...manifest.keys, ...manifest.files].filter(
      (path) => !existsSync(join(staging, path)),
    );
    if (missing.length > 0) return fail("restore", `${file} is incomplete: it lacks ${missing.join(", ")}`);
    rmSync(join(staging, MANIFEST_NAME));
    chmodSync(staging, 0o700);
    for (const key of manifest.keys) chmodSync(join(staging, key), 0o600);
    if (existsSync(dataDir)) rmSync(dataDir, { recursive: true }); // empty, checked above
    renameSync(staging, dataDir);
    const deployments = manifest.databases.filter((path) => path.endsWith("/data/berth.sqlite")).length;
    const lacksKey = manifest.databases.includes("control-plane.sqlite") && !manifest.keys.includes("secrets.key");
    process.stdout.write(
      `Restored the backup of ${manifest.source} made ${manifest.created_at} by Berth ${manifest.berth_version} into ${dataDir}: ` +
        `${manifest.databases.length} database(s), ${deployments} of them deployments', ${manifest.files.length} uploaded file(s)` +
        (manifest.keys.length > 0 ? `, ${manifest.keys.join(", ")}.\n` : ".\n") +
        (lacksKey
          ? `The backup holds no secrets.key: copy the original into ${dataDir} (mode 0600) or set BERTH_SECRETS_KEY before ` +
            "starting the control plane, or it cannot read the stored secrets.\n"
          : "") +
        "Builds are not in backups: the listener rebuilds each deployment's serving revision from its source when it starts.\n",
    );
    return 0;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The archive's manifest, or why the file is not a backup this Berth can restore. */
function readManifest(dir: string): BackupManifest | string {
  const path = join(dir, MANIFEST_NAME);
  if (!existsSync(path)) return `not a Berth backup (no ${MANIFEST_NAME} inside)`;
  let manifest: Partial<BackupManifest>;
  try {
    manifest = JSON.parse(readFileSync(path, "utf8")) as Partial<BackupManifest>;
  } catch {
    return `${MANIFEST_NAME} is not JSON`;
  }
  if (manifest.format !== BACKUP_FORMAT)
    return `backup format ${String(manifest.format)} is not one this Berth reads (${BACKUP_FORMAT})`;
  const lists = [manifest.databases, manifest.keys, manifest.files];
  if (!lists.every((list) => Array.isArray(list) && list.every((item) => typeof item === "string"))) {
    return `${MANIFEST_NAME} lacks its lists of databases, keys and files`;
  }
  if (manifest.keys!.some((key) => !KEY_FILES.includes(key))) return `${MANIFEST_NAME} names unknown key files`;
  return manifest as BackupManifest;
}
