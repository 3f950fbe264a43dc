#!/usr/bin/env node
// The black-box suite, once against embedded SQLite and, when DATABASE_URL and
// REDIS_URL are set, once more against PostgreSQL + Redis. Unit tests run once.
import { spawn, spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
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

// A second TAP copy of each pass goes to a file, so the run can end with a summary of what failed: CI shows a log's tail.
const reports = mkdtempSync(join(tmpdir(), "berth-test-report-"));
const summaries = [];

function run(files, backend) {
  console.log(`\n=== ${files.length} test files against ${backend} ===\n`);
  const report = join(reports, `${backend}.tap`);
  const result = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      // The suites import the packages' sources; the servers they start run the compiled dist/ (built by pretest).
      "--conditions=berth-source",
      "--test",
      "--test-concurrency=2",
      // The timeout only catches a hung test: a whole file (deploys with real installs) takes minutes on a loaded machine.
      "--test-timeout=600000",
      "--test-reporter=tap",
      "--test-reporter-destination=stdout",
      "--test-reporter=tap",
      `--test-reporter-destination=${report}`,
      ...files,
    ],
    { cwd: root, stdio: "inherit", env: { ...process.env, BERTH_TEST_BACKEND: backend } },
  );
  summaries.push(summarize(backend, report, result.status));
  return result.status ?? 1;
}

/** The pass's counts and every failed test with the suites around it. */
function summarize(backend, report, status) {
  const lines = existsSync(report) ? readFileSync(report, "utf8").split("\n") : [];
  const counts = lines.filter((l) => /^# (tests|pass|fail|cancelled|skipped) \d+$/.test(l)).map((l) => l.slice(2));
  const failed = [];
  const open = [];
  for (const line of lines) {
    const subtest = /^( *)# Subtest: (.*)$/.exec(line);
    if (subtest) open[subtest[1].length / 4] = subtest[2];
    const notOk = /^( *)not ok \d+ - (.*)$/.exec(line);
    if (notOk) {
      const depth = notOk[1].length / 4;
      const path = [...open.slice(0, depth), notOk[2]].join(" > ");
      // TAP reports a suite after its tests, and a suite fails when one of them does: name only the innermost failures.
      const last = failed.at(-1);
      if (!(last && last.depth > depth && last.path.startsWith(`${path} > `))) failed.push({ depth, path });
    }
  }
  return [
    `${backend}: exit ${status ?? "signal"}; ${counts.join(", ") || "no report"}`,
    ...failed.map((f) => `  not ok: ${f.path}`),
  ].join("\n");
}

/**
 * --stress: the agent server's black-box suite while a busy loop per core
 * saturates the machine (work that is not Berth's), on the backends this
 * run has. Fails when a test fails or when any server answered a 5xx: each
 * server's output is kept (BERTH_TEST_SERVER_LOG_DIR) and searched for it.
 */
async function stressRun() {
  const files = testsIn("packages/agent-server/test");
  const logs = mkdtempSync(join(tmpdir(), "berth-stress-logs-"));
  process.env.BERTH_TEST_SERVER_LOG_DIR = logs;
  const burners = Array.from({ length: availableParallelism() }, () =>
    spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
  );
  console.log(`stress: ${burners.length} busy loops saturate the machine while the agent server's suite runs`);
  let failed = false;
  try {
    failed = run(files, "sqlite") !== 0;
    if (process.env.DATABASE_URL && process.env.REDIS_URL) {
      failed = run(files, "postgres") !== 0 || failed;
      await dropTestDatabases();
    } else console.log("!! SKIPPED under stress: PostgreSQL + Redis (set DATABASE_URL and REDIS_URL)");
  } finally {
    for (const burner of burners) burner.kill("SIGKILL");
  }
  const errors = [];
  for (const name of readdirSync(logs)) {
    for (const line of readFileSync(join(logs, name), "utf8").split("\n")) {
      // A 500 is logged as "request failed"; a 503/507 as "request failed: storage unavailable", which only the servers
      // whose storage a test breaks on purpose may answer (their data directories: helpers/outages.ts, chaos-topology.ts).
      const failedRequest = line.includes('"msg":"request failed"');
      const broken = name.startsWith("berth-full-") || name.startsWith("berth-chaos-");
      const outage = line.includes('"msg":"request failed: storage unavailable"') && !broken;
      if (failedRequest || outage) errors.push(`${name}: ${line.slice(0, 400)}`);
    }
  }
  console.log(`\n=== stress summary ===\n${summaries.join("\n")}`);
  console.log(`servers' answers with a 5xx status: ${errors.length}`);
  for (const line of errors) console.log(`  ${line}`);
  return failed || errors.length > 0 ? 1 : 0;
}

async function dropTestDatabases() {
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  const { rows } = await admin.query("SELECT datname FROM pg_database WHERE datname LIKE 'berth\\_t\\_%'");
  for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  await admin.end();
}

if (process.argv.includes("--stress")) process.exit(await stressRun());

/**
 * Files whose first line says they run in the SQLite pass only: their subject is compute, the CLI or the dashboard,
 * where the control plane's database plays no part (its storage has its own contract tests and API tests on both).
 */
const sqliteOnly = blackBox.filter((file) =>
  readFileSync(join(root, file), "utf8").startsWith("// Runs in the SQLite pass only:"),
);

let failed = run([...unit, ...blackBox], "sqlite") !== 0;
if (process.env.DATABASE_URL && process.env.REDIS_URL) {
  console.log(`\n=== ${sqliteOnly.length} test files ran in the SQLite pass only (first line of each says why) ===`);
  for (const file of sqliteOnly) console.log(`  ${file}`);
  failed =
    run(
      blackBox.filter((file) => !sqliteOnly.includes(file)),
      "postgres",
    ) !== 0 || failed;
  await dropTestDatabases();
} else {
  console.log(`\n${"!".repeat(78)}`);
  console.log("!! SKIPPED: the black-box suite against PostgreSQL + Redis.");
  console.log("!! Set DATABASE_URL (postgres://...) and REDIS_URL (redis://...) to run it.");
  console.log(`${"!".repeat(78)}\n`);
}
console.log(`\n=== summary ===\n${summaries.join("\n")}`);
process.exit(failed ? 1 : 0);
