import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type ControlPlane, startControlPlane, TEST_BACKEND } from "@berth/test-support";

const skip = TEST_BACKEND !== "postgres" ? "needs PostgreSQL (BERTH_TEST_BACKEND=postgres with DATABASE_URL)" : false;
if (skip) console.warn(`SKIPPED weak-auth.test.ts: ${skip}`);

describe("control plane on a PostgreSQL that lets anyone in", { skip }, () => {
  let controlPlane: ControlPlane;

  before(async () => {
    // The test PostgreSQL uses trust authentication on 127.0.0.1 (postgres://postgres@127.0.0.1:5432/...).
    controlPlane = await startControlPlane();
  });
  after(() => controlPlane?.stop());

  it("warns at start that its database accepts connections without a password, and says what to do", async () => {
    const [line] = await controlPlane.outputLine(
      /^\{.*PostgreSQL \(DATABASE_URL\) accepts connections without a password.*\}$/,
      30_000,
    );
    const entry = JSON.parse(line) as { level: number; msg: string; setting: string; risk: string };
    assert.equal(entry.level, 40, "a warning");
    assert.equal(entry.setting, "DATABASE_URL");
    assert.equal(entry.risk, "postgres_without_password");
    assert.match(entry.msg, /scram-sha-256/);
    assert.match(entry.msg, /docs\/security\.md/);
  });

  it("serves all the same", async () => {
    const listed = await controlPlane.admin.get("/v2/deployments");
    assert.equal(listed.status, 200);
  });
});
