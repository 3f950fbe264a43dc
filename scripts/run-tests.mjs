#!/usr/bin/env node
// The black-box suite, once against embedded SQLite and, when DATABASE_URL and
// REDIS_URL are set, once more against PostgreSQL + Redis. Unit tests run once.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";

const root = new URL("..", import.meta.url).pathname;
const testsIn = (dir) =>
  existsSync(join(root, dir))
    ? readdirSync(join(root, dir))
        .filter((f) => f.endsWith(".test.ts"))
        .map((f) => join(dir, f))
    : [];
const packages = readdirSync(join(root, "packages"));
const blackBox = packages.flatMap((p) => testsIn(`packages/${p}/test`));
const unit = packages.flatMap((p) => testsIn(`packages/${p}/test/unit`));

function run(files, backend) {
  console.log(`\n=== ${files.length} test files against ${backend} ===\n`);
  const result = spawnSync(
    process.execPath,
    // The timeout only catches a hung test: a whole file (deploys with real installs) takes minutes on a loaded machine.
    ["--import", "tsx", "--test", "--test-concurrency=2", "--test-timeout=600000", ...files],
    { cwd: root, stdio: "inherit", env: { ...process.env, BERTH_TEST_BACKEND: backend } },
  );
  return result.status ?? 1;
}

async function dropTestDatabases() {
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  const { rows } = await admin.query("SELECT datname FROM pg_database WHERE datname LIKE 'berth\\_t\\_%'");
  for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  await admin.end();
}

let failed = run([...unit, ...blackBox], "sqlite") !== 0;
if (process.env.DATABASE_URL && process.env.REDIS_URL) {
  failed = run(blackBox, "postgres") !== 0 || failed;
  await dropTestDatabases();
} else {
  console.log(`\n${"!".repeat(78)}`);
  console.log("!! SKIPPED: the black-box suite against PostgreSQL + Redis.");
  console.log("!! Set DATABASE_URL (postgres://...) and REDIS_URL (redis://...) to run it.");
  console.log(`${"!".repeat(78)}\n`);
}
process.exit(failed ? 1 : 0);
