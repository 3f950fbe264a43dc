#!/usr/bin/env node
// Compiles every package's src/ (TypeScript) to dist/ (ESM JavaScript, one file
// per source, same tree), and copies the other files there (SQL migrations, .mjs
// workers), so Berth runs without a TypeScript loader. A package with a
// vite.config.ts (the dashboard) is a web app instead: Vite bundles it into
// dist/. `--if-stale` builds only when a source is newer than the last build
// (scripts/ensure-install.mjs).
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const STAMP = ".built";
const VITE_CONFIG = "vite.config.ts";
/** A web app's sources beyond src/ and package.json. */
const WEB_APP_FILES = [VITE_CONFIG, "index.html"];

const isWebApp = (dir) => existsSync(join(dir, VITE_CONFIG));

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The packages that have sources, and whether each one's dist/ is older than one of them. */
export function packagesToBuild({ onlyStale }) {
  const packages = readdirSync(join(root, "packages"))
    .map((name) => join(root, "packages", name))
    .filter((dir) => existsSync(join(dir, "src")));
  if (!onlyStale) return packages;
  return packages.filter((dir) => {
    const stamp = join(dir, "dist", STAMP);
    if (!existsSync(stamp)) return true;
    const builtAt = statSync(stamp).mtimeMs;
    const extra = isWebApp(dir) ? WEB_APP_FILES.map((name) => join(dir, name)) : [];
    return [...filesUnder(join(dir, "src")), join(dir, "package.json"), ...extra].some(
      (file) => statSync(file).mtimeMs > builtAt,
    );
  });
}

/** Vite is loaded only when a web app needs building: a Node-only rebuild stays fast. */
async function buildWebApp(dir) {
  const { build: viteBuild } = await import("vite");
  await viteBuild({ root: dir, configFile: join(dir, VITE_CONFIG), logLevel: "warn" });
  writeFileSync(join(dir, "dist", STAMP), `${new Date().toISOString()}\n`);
}

async function buildPackage(dir) {
  if (isWebApp(dir)) return buildWebApp(dir);
  const src = join(dir, "src");
  const dist = join(dir, "dist");
  // Built beside dist/ and swapped in: a process starting meanwhile finds the old build or the new one, never half of one.
  const fresh = join(dir, `.dist-${process.pid}`);
  rmSync(fresh, { recursive: true, force: true });
  const files = filesUnder(src);
  const sources = files.filter((file) => /\.(c|m)?ts$/.test(file) && !/\.d\.(c|m)?ts$/.test(file));
  await build({
    entryPoints: sources,
    outdir: fresh,
    outbase: src,
    format: "esm",
    platform: "node",
    target: "node20",
    // Stack traces point at the TypeScript (with --enable-source-maps).
    sourcemap: true,
    logLevel: "warning",
  });
  for (const file of files.filter((f) => !sources.includes(f))) {
    const target = join(fresh, relative(src, file));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(file, target);
  }
  writeFileSync(join(fresh, STAMP), `${new Date().toISOString()}\n`);
  const old = join(dir, `.dist-old-${process.pid}`);
  if (existsSync(dist)) renameSync(dist, old);
  renameSync(fresh, dist);
  rmSync(old, { recursive: true, force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const stale = packagesToBuild({ onlyStale: process.argv.includes("--if-stale") });
  const started = performance.now();
  await Promise.all(stale.map(buildPackage));
  if (stale.length > 0) {
    const names = stale.map((dir) => relative(join(root, "packages"), dir)).join(", ");
    console.error(`berth: built ${names} in ${Math.round(performance.now() - started)} ms`);
  }
}
