#!/usr/bin/env node
// Settings are read in one module per program, and every variable they read
// is documented: the README's configuration tables (or the docs page they
// link to) name each one, and name none that no program reads.
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Each program's settings modules: the only production files that read named environment variables. */
const SETTINGS_MODULES = [
  "packages/agent-server/src/config/settings.ts",
  "packages/control-plane/src/config/settings.ts",
  "packages/listener/src/listener/settings.ts",
  "packages/cli/src/settings.ts",
  // Graph code's helper, loaded into the projects' processes: the platform sets both variables there.
  "packages/graph-auth/src/index.ts",
  // LOG_LEVEL, for every program's logger.
  "packages/service-kit/src/logger.ts",
];

/** Variables read for tests or by the processes Berth starts for itself; not user settings. */
const INTERNAL = [
  // Conventions of other tools, read where the convention applies: a child's PATH, libpq's host, Docker's and Kubernetes' clients.
  "PATH",
  "PGHOST",
  "DOCKER_HOST",
  "KUBECONFIG",
  "KUBERNETES_SERVICE_HOST",
];

/** A read anywhere: process.env.NAME, process.env["NAME"], or a service-kit env helper's first argument. */
const READ =
  /process\.env\.([A-Z][A-Z0-9_]+)|process\.env\[\s*"([A-Z][A-Z0-9_]+)"\s*\]|\benv[A-Z][A-Za-z]*\(\s*"([A-Z][A-Z0-9_]+)"/g;

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|tsx|mts)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

const problems = [];
const read = new Map();
/** In a settings module, every variable it names is one it reads (helpers there take the name as a string or `env.NAME`). */
const NAMED = /"([A-Z][A-Z0-9_]*_[A-Z0-9_]+)"|\benv\.([A-Z][A-Z0-9_]+)/g;

// test-support is the tests' own: its variables configure the suites, not a program.
for (const pkg of readdirSync(join(root, "packages")).filter((name) => name !== "test-support")) {
  let files;
  try {
    files = sources(join(root, "packages", pkg, "src"));
  } catch {
    continue;
  }
  for (const file of files) {
    const path = relative(root, file);
    const text = readFileSync(file, "utf8");
    if (SETTINGS_MODULES.includes(path)) {
      for (const match of text.matchAll(NAMED)) {
        const name = match[1] ?? match[2];
        if (!read.has(name)) read.set(name, []);
        read.get(name).push(path);
      }
    }
    for (const match of text.matchAll(READ)) {
      const name = match[1] ?? match[2] ?? match[3];
      if (!read.has(name)) read.set(name, []);
      read.get(name).push(path);
      if (!SETTINGS_MODULES.includes(path) && !INTERNAL.includes(name)) {
        const line = text.slice(0, match.index).split("\n").length;
        problems.push(
          `${path}:${line} reads ${name}: settings are read in the program's settings module (${SETTINGS_MODULES.join(", ")})`,
        );
      }
    }
  }
}

const docs = [
  readFileSync(join(root, "README.md"), "utf8"),
  ...readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => readFileSync(join(root, "docs", f), "utf8")),
].join("\n");
for (const name of read.keys()) {
  if (name.startsWith("BERTH_") && !INTERNAL.includes(name) && !docs.includes(`\`${name}\``)) {
    problems.push(`${name} is read by ${read.get(name)[0]} but documented nowhere (README.md's configuration tables or docs/)`);
  }
}
const readme = readFileSync(join(root, "README.md"), "utf8");
for (const [, name] of readme.matchAll(/`(BERTH_[A-Z0-9_]+)`/g)) {
  if (!read.has(name)) problems.push(`README.md documents ${name}, which no program reads`);
}
for (const problem of [...new Set(problems)]) console.error(problem);
if (problems.length > 0) process.exit(1);
console.log(`settings: ${read.size} variables, each read in a settings module and documented`);
