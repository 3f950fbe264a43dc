#!/usr/bin/env node
// Installs dependencies on a fresh clone (or after the lockfile changed) and
// compiles the packages whose sources changed since (scripts/build.mjs), so
// `npm start` and `npm test` are the only commands a new user needs.
// With --test-fixtures it also installs the test fixture projects that bring
// their own node_modules.
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const FIXTURE_PROJECTS = ["packages/agent-server/test/fixtures/own-deps"];

function isStale(dir) {
  const lock = join(dir, "package-lock.json");
  const installed = join(dir, "node_modules", ".package-lock.json");
  return !existsSync(installed) || statSync(lock).mtimeMs > statSync(installed).mtimeMs;
}

function install(dir) {
  console.error(`berth: installing dependencies in ${dir === root ? "." : dir.slice(root.length + 1)} ...`);
  const result = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: dir, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (isStale(root)) install(root);
if (process.argv.includes("--test-fixtures")) {
  for (const fixture of FIXTURE_PROJECTS) {
    const dir = join(root, fixture);
    if (isStale(dir)) install(dir);
  }
}
const build = spawnSync(process.execPath, [join(root, "scripts", "build.mjs"), "--if-stale"], { cwd: root, stdio: "inherit" });
if (build.status !== 0) process.exit(build.status ?? 1);
