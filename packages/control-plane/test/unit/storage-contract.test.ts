// The control plane's storage contract (src/storage/types.ts): every method of
// every store, against SQLite always and against PostgreSQL when DATABASE_URL
// is set, each test on a fresh database with two storages over it (two
// processes sharing it). Without DATABASE_URL, PostgreSQL's part is one
// skipped test that says why.
import { describe, it } from "node:test";
import { accountsContract } from "./storage-contract/accounts.js";
import { authContract } from "./storage-contract/auth.js";
import { BACKENDS } from "./storage-contract/backends.js";
import { conditionsContract } from "./storage-contract/conditions.js";
import { deploymentMetricsContract } from "./storage-contract/deployment-metrics.js";
import { deploymentsContract } from "./storage-contract/deployments.js";
import { lifecycleContract } from "./storage-contract/lifecycle.js";
import { listenersContract } from "./storage-contract/listeners.js";
import { parityWithSqlite } from "./storage-contract/parity.js";
import { postgresOnlyContract } from "./storage-contract/postgres-only.js";
import { DATABASE_URL, skipWithoutPostgres } from "./storage-contract/postgres-schema.js";
import { tracingContract } from "./storage-contract/tracing.js";
import { upgradeContract } from "./storage-contract/upgrade.js";

for (const backend of BACKENDS) {
  describe(`Control plane storage contract on ${backend.name}`, () => {
    accountsContract(backend);
    authContract(backend);
    conditionsContract(backend);
    deploymentsContract(backend);
    deploymentMetricsContract(backend);
    lifecycleContract(backend);
    listenersContract(backend);
    tracingContract(backend);
    upgradeContract(backend);
    if (backend.name === "PostgreSQL") {
      postgresOnlyContract();
      parityWithSqlite();
    }
  });
}

if (!DATABASE_URL) {
  describe("Control plane storage contract on PostgreSQL", () => {
    it("runs every test above against PostgreSQL too", {
      skip: skipWithoutPostgres("the control plane's storage contract on PostgreSQL"),
    }, () => {});
  });
}
