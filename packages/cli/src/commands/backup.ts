import { BERTH_VERSION, backupSqliteDatabase } from "@berth/service-kit";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import * as tar from "tar";
import { parsedOrError } from "../process.js";
import { BACKUP_HELP } from "./backup-usage.js";
import { BACKUP_FORMAT, type BackupManifest, backupContents, MANIFEST_NAME } from "./backup-contents.js";
import { fail } from "./output.js";

/** `berth backup <data-dir> <file> [--without-key]`: an online copy of a SQLite data directory in one tar file. */
export async function backupCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: { "without-key": { type: "boolean" }, help: { type: "boolean", short: "h" } },
    }),
  );
  if (parsed instanceof Error) return fail("backup", `${parsed.message}\n\n${BACKUP_HELP}`, 2);
  if (parsed.values.help) {
    process.stdout.write(BACKUP_HELP);
    return 0;
  }
  if (parsed.positionals.length !== 2) return fail("backup", `expected a data directory and a file\n\n${BACKUP_HELP}`, 2);
  const [dataDir, file] = parsed.positionals.map((path) => resolve(path)) as [string, string];
  if (!existsSync(dataDir) || !statSync(dataDir).isDirectory()) return fail("backup", `${dataDir} is not a directory`);
  const withKeys = parsed.values["without-key"] !== true;
  const contents = backupContents(dataDir, withKeys);
  if (contents.databases.length === 0) {
    return fail(
      "backup",
      `${dataDir} holds no Berth SQLite database (control-plane.sqlite, berth.sqlite, or deployments' databases). ` +
        "With DATABASE_URL the data is in PostgreSQL: back it up with pg_dump (docs/operations.md).",
    );
  }

  mkdirSync(dirname(file), { recursive: true });
  const staging = mkdtempSync(join(dirname(file), ".berth-backup-"));
  const partial = `${file}.partial`;
  try {
    for (const database of contents.databases) {
      const target = join(staging, database);
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      await backupSqliteDatabase(join(dataDir, database), target);
    }
    for (const path of [...contents.keys, ...contents.files]) {
      const target = join(staging, path);
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      copyFileSync(join(dataDir, path), target);
    }
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      berth_version: BERTH_VERSION,
      created_at: new Date().toISOString(),
      source: dataDir,
      ...contents,
    };
    writeFileSync(join(staging, MANIFEST_NAME), `${JSON.stringify(manifest, null, 2)}\n`);
    // Written beside the file, then renamed: a reader never sees half an archive. 0600: it may hold the keys.
    writeFileSync(partial, "", { mode: 0o600 });
    await tar.c({ gzip: true, file: partial, cwd: staging, portable: true }, [
      MANIFEST_NAME,
      ...contents.databases,
      ...contents.keys,
      ...contents.files,
    ]);
    renameSync(partial, file);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(partial, { force: true });
  }

  const deployments = contents.databases.filter((path) => path.endsWith("/data/berth.sqlite")).length;
  process.stdout.write(
    `Backed up ${dataDir} to ${file} (${(statSync(file).size / 1e6).toFixed(1)} MB): ` +
      `${contents.databases.length} database(s), ${deployments} of them deployments', ` +
      `${contents.files.length} uploaded file(s)` +
      (contents.keys.length > 0 ? `, and ${contents.keys.join(", ")}.\n` : ".\n") +
      (contents.keys.includes("secrets.key")
        ? "The file holds secrets.key, which decrypts every stored secret: keep it as you keep that key (encrypted, access-controlled).\n"
        : withKeys
          ? ""
          : "Without the keys: keep secrets.key apart, a restore needs it to read the stored secrets.\n") +
      (existsSync(join(dataDir, "secrets.key")) && !contents.databases.includes("control-plane.sqlite")
        ? "The control plane's database is not in this directory (DATABASE_URL): back it up with pg_dump (docs/operations.md).\n"
        : ""),
  );
  return 0;
}
