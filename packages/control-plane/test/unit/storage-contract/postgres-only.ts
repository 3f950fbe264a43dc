// What only PostgreSQL has: its own migrations table, so that the database
// can also hold an agent server's tables.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createPostgresStorage } from "../../../src/storage/postgres/index.js";
import { admin, freshSchema } from "./postgres-schema.js";

export function postgresOnlyContract(): void {
  describe("PostgreSQL only", () => {
    it("records its migrations in control_plane_migrations, and closes twice", async () => {
      const schema = await freshSchema();
      try {
        const storage = await createPostgresStorage(schema.url, { poolSize: 1 });
        await storage.close();
        const { rows } = await admin("SELECT version, name FROM control_plane_migrations ORDER BY version", schema.url);
        assert.deepEqual(rows, [
          { version: 1, name: "001_control_plane.sql" },
          { version: 2, name: "002_lifecycle.sql" },
          { version: 3, name: "003_tracing.sql" },
          { version: 4, name: "004_image_digest.sql" },
          { version: 5, name: "005_git_integrations.sql" },
          { version: 6, name: "006_auth_service.sql" },
          { version: 7, name: "007_auth_deployments.sql" },
          { version: 8, name: "008_status_conditions.sql" },
          { version: 9, name: "009_tracing_roots.sql" },
          { version: 10, name: "010_deployment_metrics.sql" },
        ]);
        const extra = await createPostgresStorage(schema.url, { poolSize: 1 });
        await extra.close();
        await extra.close();
      } finally {
        await schema.drop();
      }
    });
  });
}
