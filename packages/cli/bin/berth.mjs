#!/usr/bin/env node
// Berth runs compiled: dist/ is built from src/ at install (scripts/build.mjs,
// which npm start, npm test and npm run dev call); a checkout never built is built here once.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const compiled = new URL("../dist/main.js", import.meta.url);
if (!existsSync(compiled)) {
  const build = fileURLToPath(new URL("../../../scripts/build.mjs", import.meta.url));
  const result = spawnSync(process.execPath, [build, "--if-stale"], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
const { main } = await import(compiled.href);
process.exitCode = await main(process.argv.slice(2));
