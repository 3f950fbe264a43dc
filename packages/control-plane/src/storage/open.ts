import type { ControlPlaneStorage } from "./types.js";

/** PostgreSQL when a URL is given, else the embedded SQLite file in the data directory. */
export async function openStorage(
  dataDir: string,
  databaseUrl: string | undefined,
  poolSize: number,
): Promise<ControlPlaneStorage> {
  if (databaseUrl) {
    const { createPostgresStorage } = await import("./postgres/index.js");
    return createPostgresStorage(databaseUrl, { poolSize });
  }
  const { createSqliteStorage } = await import("./sqlite/index.js");
  return createSqliteStorage(dataDir);
}
