// A database an early release made (the first migration only) upgrades in
// place when a storage opens it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Backend } from "./backends.js";
import { newProvider } from "./fixtures.js";

const AT = "2025-01-01T00:00:00.000Z";

/** The same SQL on both backends: rows as the first migration's tables held them. */
const FIRST_RELEASE_ROWS = [
  `INSERT INTO tenants VALUES ('t', 't', '${AT}')`,
  `INSERT INTO listeners VALUES ('l', 't', 'cluster', 'c', '{"cluster_namespaces":null}', NULL, '${AT}', '${AT}')`,
  `INSERT INTO deployments
     VALUES ('d', 't', 'old', 'external_image', '{}', NULL, 'READY', 'r', 'r', NULL, 'l', '${AT}', '${AT}', NULL)`,
  `INSERT INTO revisions VALUES ('r', 'd', 't', 1, 'DEPLOYED', '', 'external_image', '{}', '{}', NULL, 'c', '${AT}', '${AT}')`,
];

export function upgradeContract(backend: Backend): void {
  describe("migrations", () => {
    it("upgrades a database made by the first migration, keeping its rows", async () => {
      const database = await backend.createAtFirstMigration(FIRST_RELEASE_ROWS);
      try {
        const upgraded = await database.open();
        try {
          assert.equal((await upgraded.listeners.get("t", "l"))?.default, false);
          assert.equal((await upgraded.deployments.get("t", "d"))?.listener_id, "l");
          assert.equal((await upgraded.revisions.getAny("r"))?.artifact_revision_id, null);
          assert.deepEqual(await upgraded.revisions.events("r"), []); // no timeline before the upgrade
          assert.deepEqual(await upgraded.deployments.assigned("l").then((ds) => ds.map((d) => d.id)), ["d"]);
          // The Auth Service's tables came with the upgrade, for the workspaces already there.
          assert.deepEqual(await upgraded.auth.listProviders("t"), []);
          const provider = newProvider("t", "slack");
          await upgraded.auth.createProvider(provider);
          assert.deepEqual(await upgraded.auth.listProviders("t"), [provider]);
        } finally {
          await upgraded.close();
        }
      } finally {
        await database.drop();
      }
    });
  });
}
