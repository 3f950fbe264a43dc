// The agent server's Storage contract (src/storage/types.ts): every method of
// every repository, against SQLite always and against PostgreSQL when
// DATABASE_URL is set, each test on a fresh database. Without DATABASE_URL,
// PostgreSQL's part is one skipped test that says why.
import { describe, it } from "node:test";
import { BACKENDS } from "./storage-contract/backends.js";
import { checkpointsContract } from "./storage-contract/checkpoints.js";
import { claimOnCreateContract } from "./storage-contract/claim-on-create.js";
import { parityWithSqlite } from "./storage-contract/parity.js";
import { postgresOnlyContract } from "./storage-contract/postgres-only.js";
import { runEndEventsContract } from "./storage-contract/run-end-events.js";
import { DATABASE_URL, skipWithoutPostgres } from "./storage-contract/postgres-schema.js";
import { scopesContract } from "./storage-contract/scopes.js";
import { sharedDatabaseContract } from "./storage-contract/shared-database.js";
import { storeContract, storeParityWithSqlite } from "./storage-contract/memory-store.js";
import { threadsContract } from "./storage-contract/threads.js";
import { webhookOutboxContract } from "./storage-contract/webhook-outbox.js";

for (const backend of BACKENDS) {
  describe(`Storage contract on ${backend.name}`, () => {
    sharedDatabaseContract(backend);
    storeContract(backend);
    threadsContract(backend);
    checkpointsContract(backend);
    claimOnCreateContract(backend);
    scopesContract(backend);
    webhookOutboxContract(backend);
    runEndEventsContract(backend);
    if (backend.name === "PostgreSQL") {
      postgresOnlyContract(backend);
      parityWithSqlite();
      storeParityWithSqlite();
    }
  });
}

if (!DATABASE_URL) {
  describe("Storage contract on PostgreSQL", () => {
    it("runs every test above against PostgreSQL too", {
      skip: skipWithoutPostgres("the storage contract on PostgreSQL"),
    }, () => {});
  });
}
