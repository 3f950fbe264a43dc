import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join, posix } from "node:path";

/** The file at the archive's root that says what it holds. */
export const MANIFEST_NAME = "berth-backup.json";
/** Archives this CLI writes; restore refuses others. */
export const BACKUP_FORMAT = 1;

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  /** The Berth that made the backup (`berth --version`). */
  berth_version: string;
  created_at: string;
  /** The data directory backed up, as given. */
  source: string;
  /** SQLite databases, relative to the data directory ("/"-separated), each copied online. */
  databases: string[];
  /** Key files (secrets.key, admin.key); empty with --without-key. */
  keys: string[];
  /** Other files copied as they are: uploaded sources. */
  files: string[];
}

/** The data directory's own databases: a control plane's, or an agent server's (`berth dev`/`serve --data-dir`). */
const ROOT_DATABASES = ["control-plane.sqlite", "berth.sqlite"];
/** Each deployment's database, under a control plane's embedded listener or a `berth listener`'s data directory. */
const DEPLOYMENT_DIRS = ["listener/deployments", "deployments"];
/** secrets.key decrypts every stored secret; admin.key is the first admin API key in clear. */
export const KEY_FILES = ["secrets.key", "admin.key"];
/** Uploaded project tarballs: a revision is rebuilt from them (builds themselves are not backed up). */
const COPIED_DIRS = ["uploads"];

/** What `berth backup` copies from a data directory (paths relative to it, "/"-separated). */
export function backupContents(
  dataDir: string,
  withKeys: boolean,
): Omit<BackupManifest, "format" | "berth_version" | "created_at" | "source"> {
  const databases = ROOT_DATABASES.filter((name) => isFile(join(dataDir, name)));
  for (const base of DEPLOYMENT_DIRS) {
    for (const deployment of subdirectories(join(dataDir, base))) {
      const database = posix.join(base, deployment, "data", "berth.sqlite");
      if (isFile(join(dataDir, database))) databases.push(database);
    }
  }
  const keys = withKeys ? KEY_FILES.filter((name) => isFile(join(dataDir, name))) : [];
  const files = COPIED_DIRS.flatMap((dir) => filesUnder(dataDir, dir));
  return { databases, keys, files };
}

function isFile(path: string): boolean {
  return existsSync(path) && lstatSync(path).isFile();
}

function subdirectories(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** Regular files under `dir` (relative to root), recursively; symbolic links are not followed. */
function filesUnder(root: string, dir: string): string[] {
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(root, path);
    return entry.isFile() ? [path] : [];
  });
}
