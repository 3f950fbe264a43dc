import type { CheckpointSaverTestInitializer } from "@langchain/langgraph-checkpoint-validation";
import { SqliteCheckpointer } from "../../src/storage/sqlite/checkpointer.js";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/storage/sqlite/database.js";

// Each checkpointer gets its own in-memory database, so instances share no state.
const databases = new WeakMap<SqliteCheckpointer, SqliteDatabase>();

const initializer: CheckpointSaverTestInitializer<SqliteCheckpointer> = {
  checkpointerName: "berth-sqlite",
  createCheckpointer() {
    const db = openSqliteDatabase(":memory:");
    const checkpointer = new SqliteCheckpointer(db);
    databases.set(checkpointer, db);
    return checkpointer;
  },
  destroyCheckpointer(checkpointer) {
    databases.get(checkpointer)?.close();
  },
};

export default initializer;
