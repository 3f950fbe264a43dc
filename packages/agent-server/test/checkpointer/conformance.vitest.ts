// LangGraph's checkpointer conformance suite, run through its library API: the
// package's `validate-checkpointer` CLI (1.1.1) is broken as published.
// SQLite always; PostgreSQL when DATABASE_URL names a database to test against.
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import {
  deltaChannelHistoryTests,
  validate,
  type CheckpointSaverTestInitializer,
} from "@langchain/langgraph-checkpoint-validation";
import postgresInitializer from "./postgres-initializer.js";
import sqliteInitializer from "./sqlite-initializer.js";

const initializers: CheckpointSaverTestInitializer<BaseCheckpointSaver>[] = [sqliteInitializer];
if (process.env.DATABASE_URL) initializers.push(postgresInitializer);
else {
  console.warn(
    "\n*** SKIPPED: the PostgreSQL checkpointer conformance suite (DATABASE_URL is not set). ***\n" +
      "*** Run it with DATABASE_URL=postgres://postgres@127.0.0.1:5432/test. ***\n",
  );
}

for (const initializer of initializers) {
  validate(initializer);
  // Opt-in upstream (not part of validate), but it checks the pendingWrites order that LangGraph relies on.
  deltaChannelHistoryTests(initializer);
}
