import { join } from "node:path";
import type { Storage } from "../types.js";
import { SqliteAssistantRepository } from "./assistants.js";
import { SqliteCheckpointer } from "./checkpointer.js";
import { openSqliteDatabase, type SqliteSynchronous } from "./database.js";
import { SqliteRunRepository } from "./runs.js";
import { SqliteThreadRepository } from "./threads.js";

/** The embedded storage: one SQLite file (WAL) under the data directory. */
export function createSqliteStorage(dataDir: string, synchronous: SqliteSynchronous = "full"): Storage {
  const db = openSqliteDatabase(join(dataDir, "berth.sqlite"), synchronous);
  const checkpointer = new SqliteCheckpointer(db);
  return {
    assistants: new SqliteAssistantRepository(db),
    threads: new SqliteThreadRepository(db, checkpointer),
    runs: new SqliteRunRepository(db),
    checkpointer,
    async close() {
      db.close();
    },
  };
}
