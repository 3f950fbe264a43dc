#!/usr/bin/env node
// `npm run pack`: builds Berth and writes one npm tarball per package a user
// installs to packs/ (or `--out DIR`), ready for `npm install` outside this
// repository or for `npm publish`. Every package is staged in a temporary
// folder first, so the workspace's package.json files stay as they are: the
// staged one points `exports` at dist/ only (no `berth-source` condition, no
// src/ in the tarball), carries type declarations compiled into dist/, drops
// devDependencies and takes the root's `engines`. All packages share one
// version and depend on each other at exactly that version.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The packages a user installs, as folders of the repository: `berth` needs all of them at run time. */
export const PUBLISHED = [
  "packages/service-kit",
  "packages/listener-protocol",
  "packages/graph-auth",
  "packages/agent-server",
  "packages/listener",
  "packages/dashboard",
  "packages/control-plane",
  "packages/cli",
  // The user-facing name: `npm install -g berth`, `npx berth`.
  "packaging/berth",
];
/** Packages that only compile to JavaScript for a browser: no declarations. */
const WEB_APPS = new Set(["packages/dashboard"]);
const BERTH_SCOPE = "@berth/";

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));

function run(command, args, options) {
  const result = spawnSync(command, args, { stdio: ["ignore", "inherit", "inherit"], ...options });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (exit ${result.status ?? result.signal})`);
  return result;
}

/** Every published package at one version, depending on each other at exactly it, and on nothing private. */
function checkVersions(manifests) {
  const names = new Set(manifests.map(({ manifest }) => manifest.name));
  const version = manifests.find(({ dir }) => dir === "packages/cli").manifest.version;
  const problems = [];
  for (const { dir, manifest } of manifests) {
    if (manifest.version !== version) problems.push(`${dir} is at ${manifest.version}, not ${version}`);
    if (manifest.private) problems.push(`${dir} is private`);
    if (!Array.isArray(manifest.files)) problems.push(`${dir} does not list its files`);
    for (const [name, range] of Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies })) {
      const ours = name.startsWith(BERTH_SCOPE) || name === "berth";
      if (ours && !names.has(name)) problems.push(`${dir} depends on ${name}, which is not published`);
      if (ours && range !== version) problems.push(`${dir} depends on ${name}@${range}, not exactly ${version}`);
    }
  }
  if (problems.length > 0) throw new Error(`berth pack: the packages disagree:\n  ${problems.join("\n  ")}`);
  return version;
}

/**
 * Type declarations of every TypeScript package, in one compiler run: each
 * package's src/ lands in `<out>/<package folder>/src`. A type error fails
 * the pack, as a release must type-check.
 */
function compileDeclarations(dirs, out) {
  const tsconfig = join(out, "tsconfig.json");
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: join(root, "tsconfig.base.json"),
      compilerOptions: {
        noEmit: false,
        declaration: true,
        emitDeclarationOnly: true,
        rootDir: root,
        outDir: out,
        typeRoots: [join(root, "node_modules", "@types")],
      },
      include: dirs.map((dir) => join(root, dir, "src", "**", "*.ts")),
    }),
  );
  run(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", tsconfig], { cwd: root });
}

/** `exports` as published: conditions leading to dist/ only, types from the compiled declarations. */
function publishedExports(exports, dir) {
  if (exports === undefined) return undefined;
  const entries = Object.entries(exports).map(([subpath, target]) => {
    if (typeof target === "string") return [subpath, target];
    const { "berth-source": _source, types, ...rest } = target;
    const declarations = types?.replace(/^\.\/src\//, "./dist/").replace(/\.ts$/, ".d.ts");
    for (const path of Object.values(rest)) {
      if (!path.startsWith("./dist/")) throw new Error(`berth pack: ${dir} exports ${subpath} from ${path}, outside dist/`);
    }
    return [subpath, declarations ? { types: declarations, ...rest } : rest];
  });
  return Object.fromEntries(entries);
}

/** The package.json that goes into the tarball. */
function publishedManifest(manifest, dir, engines) {
  const { devDependencies: _dev, exports, ...rest } = manifest;
  const published = { ...rest, engines: manifest.engines ?? engines };
  const mapped = publishedExports(exports, dir);
  if (mapped) published.exports = mapped;
  return published;
}

/** Copies what `files` names (and README/LICENSE), adds declarations, writes the published package.json. */
function stage(dir, manifest, { stageRoot, declarations, engines }) {
  const source = join(root, dir);
  const target = join(stageRoot, dir);
  mkdirSync(target, { recursive: true });
  for (const entry of manifest.files.filter((entry) => !entry.startsWith("!"))) {
    if (!existsSync(join(source, entry))) throw new Error(`berth pack: ${dir}/${entry} is missing (is it built?)`);
    cpSync(join(source, entry), join(target, entry), { recursive: true });
  }
  for (const name of readdirSync(source).filter((name) => /^(readme|license)(\.md)?$/i.test(name))) {
    cpSync(join(source, name), join(target, name));
  }
  const compiled = join(declarations, dir, "src");
  if (existsSync(compiled)) cpSync(compiled, join(target, "dist"), { recursive: true });
  writeFileSync(join(target, "package.json"), `${JSON.stringify(publishedManifest(manifest, dir, engines), null, 2)}\n`);
  return target;
}

export function pack(outDir) {
  const manifests = PUBLISHED.map((dir) => ({ dir, manifest: readJson(join(root, dir, "package.json")) }));
  const version = checkVersions(manifests);
  // On a fresh clone this installs first, as npm start does; then it builds what changed.
  run(process.execPath, [join(root, "scripts", "ensure-install.mjs")], { cwd: root });

  const work = mkdtempSync(join(tmpdir(), "berth-pack-"));
  try {
    const declarations = join(work, "declarations");
    mkdirSync(declarations);
    const typed = PUBLISHED.filter((dir) => !WEB_APPS.has(dir) && existsSync(join(root, dir, "src")));
    compileDeclarations(typed, declarations);

    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    const engines = readJson(join(root, "package.json")).engines;
    const tarballs = [];
    for (const { dir, manifest } of manifests) {
      const staged = stage(dir, manifest, { stageRoot: join(work, "stage"), declarations, engines });
      const result = run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", outDir], {
        cwd: staged,
        stdio: ["ignore", "pipe", "inherit"],
        encoding: "utf8",
      });
      const [{ filename }] = JSON.parse(result.stdout);
      tarballs.push(join(outDir, filename));
    }
    return { version, tarballs };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: "string", default: join(root, "packs") } } });
  try {
    const { version, tarballs } = pack(resolve(values.out));
    console.error(`berth: packed ${tarballs.length} packages at ${version}:`);
    for (const tarball of tarballs) console.log(relative(process.cwd(), tarball) || tarball);
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
