import Database from "better-sqlite3";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

/**
 * A directory on a tmpfs of its own, `sizeMb` large: filling it fills the
 * disk of whatever keeps its data there, and nothing else. Needs root (mount).
 */
export class SizeLimitedDir {
  private readonly filler: string;

  private constructor(readonly path: string) {
    this.filler = join(path, `filler-${randomUUID()}`);
  }

  /** Mounts it (owned by `owner`, e.g. PostgreSQL's user); rejects when mounting is not allowed. */
  static async mount(sizeMb: number, owner?: { uid: number; gid: number }): Promise<SizeLimitedDir> {
    const path = mkdtempSync(join(tmpdir(), "berth-full-"));
    const options = [`size=${sizeMb}m`, ...(owner ? [`uid=${owner.uid}`, `gid=${owner.gid}`, "mode=0700"] : [])];
    try {
      await run("mount", ["-t", "tmpfs", "-o", options.join(","), "tmpfs", path]);
    } catch (error) {
      rmSync(path, { recursive: true, force: true });
      throw error;
    }
    return new SizeLimitedDir(path);
  }

  /** Writes a file until the disk refuses more (ENOSPC). */
  async fill(): Promise<void> {
    const file = await open(this.filler, "a");
    try {
      for (const size of [1 << 20, 1 << 12]) {
        const chunk = Buffer.alloc(size, 1);
        for (;;) {
          try {
            await file.write(chunk);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "ENOSPC") break;
            throw error;
          }
        }
      }
    } finally {
      await file.close();
    }
  }

  async free(): Promise<void> {
    await rm(this.filler, { force: true });
  }

  async unmount(): Promise<void> {
    await run("umount", [this.path]).catch(() => run("umount", ["-l", this.path]));
    rmSync(this.path, { recursive: true, force: true });
  }
}

/** Terminates every connection to `database` (pg_terminate_backend), as a database restart would; returns how many. */
export async function terminateConnections(adminUrl: string, database: string): Promise<number> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query(
      "SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [database],
    );
    return rows.filter((row: { done: boolean }) => row.done).length;
  } finally {
    await admin.end();
  }
}

/**
 * Holds the write lock of a SQLite database from this (another) process for
 * `ms`: its writers wait their busy timeout, then fail with SQLITE_BUSY. The
 * SQLite equivalent of a database that does not answer.
 */
export async function holdSqliteWriteLock(file: string, ms: number): Promise<void> {
  const db = new Database(file);
  try {
    db.pragma("busy_timeout = 10000");
    db.exec("BEGIN IMMEDIATE");
    await new Promise((resolve) => setTimeout(resolve, ms));
    db.exec("COMMIT");
  } finally {
    db.close();
  }
}

/** `PRAGMA integrity_check` of a SQLite file: "ok" when sound. */
export function sqliteIntegrity(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    return (db.pragma("integrity_check") as { integrity_check: string }[]).map((row) => row.integrity_check).join("; ");
  } finally {
    db.close();
  }
}

/** The uid and gid of a system user (e.g. postgres), for a directory it must own. */
export async function userIds(name: string): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run("id", ["-u", name]), run("id", ["-g", name])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}
