import { existsSync } from "node:fs";
import Module, { createRequire, register } from "node:module";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ProjectConfig } from "../config/langgraph-config.js";
import { isSameVersionCopy, type SharedPackage, sharedPackageOf } from "./shared-copies.mjs";

/**
 * Packages whose classes cross the boundary between a project's graphs and
 * Berth (graphs, messages, commands, interrupts, checkpointers). A project may
 * bring its own copies; a second copy breaks `instanceof` checks inside
 * LangGraph, so every import of them resolves to Berth's copy. Berth's own
 * helper for graphs (@berth/graph-auth) resolves the same way: projects do not install it.
 */
const PINNED_PACKAGES = /^(@langchain\/(core|langgraph|langgraph-checkpoint)|@berth\/graph-auth)(\/.*)?$/;

/** The pinned packages a project may install a copy of (not @berth/graph-auth, which is Berth's own and unpublished). */
const PINNED_NAMES = ["@langchain/core", "@langchain/langgraph", "@langchain/langgraph-checkpoint"];

/**
 * Packages projects install beside LangChain (zod, for their state schemas):
 * a project's copy of the same version as Berth's is the same code, so its
 * imports resolve to Berth's copy, one instance instead of two (zod is ~100
 * modules and a few MB loaded). A copy of another version stays the project's.
 */
const SHARED_WHEN_SAME_VERSION = ["zod"];

let pinnedOnce = false;

/**
 * Pins the packages for the modules under `moduleDirs` (the project's). The
 * ESM resolve hook (a loader thread every later import goes through) is only
 * registered when a module there could reach another copy: when its
 * directories meet a node_modules before Berth's own.
 */
export function pinLangChainPackages(moduleDirs: string[]): void {
  if (pinnedOnce) return;
  pinnedOnce = true;
  const anchorUrl = import.meta.url;
  const berths = berthsNodeModules();
  const shared = sharedPackages();
  if (!berths || !moduleDirs.every((dir) => resolvesFirst(dir, berths))) {
    register(new URL("./pin-hooks.mjs", anchorUrl), {
      data: { anchorUrl, pattern: PINNED_PACKAGES.source, shared },
    });
  }
  pinCommonJsResolution(fileURLToPath(anchorUrl), shared);
}

/** Berth's copies of the packages shared by version, by name (those it has). */
function sharedPackages(): Record<string, SharedPackage> {
  const require = createRequire(import.meta.url);
  const shared: Record<string, SharedPackage> = {};
  for (const name of SHARED_WHEN_SAME_VERSION) {
    try {
      const manifest = require.resolve(`${name}/package.json`);
      shared[name] = { root: dirname(manifest), version: (require(manifest) as { version: string }).version };
    } catch {
      // Not installed where Berth resolves it: nothing to share.
    }
  }
  return shared;
}

/** The node_modules directory all of Berth's copies of the pinned packages are in, if they are in one. */
function berthsNodeModules(): string | undefined {
  const require = createRequire(import.meta.url);
  const dirs = new Set<string>();
  for (const name of PINNED_NAMES) {
    try {
      const manifest = require.resolve(`${name}/package.json`);
      const at = manifest.lastIndexOf(`${sep}node_modules${sep}`);
      if (at < 0) return undefined;
      dirs.add(manifest.slice(0, at + `${sep}node_modules`.length));
    } catch {
      return undefined;
    }
  }
  return dirs.size === 1 ? [...dirs][0] : undefined;
}

/** Node's own resolution from `dir` meets the node_modules `berths` before any other: it finds Berth's copies already. */
function resolvesFirst(dir: string, berths: string): boolean {
  for (let current = resolve(dir); ; current = dirname(current)) {
    const candidate = join(current, "node_modules");
    if (candidate === berths) return true;
    if (existsSync(candidate) || dirname(current) === current) return false;
  }
}

type ResolveFilename = (request: string, parent: unknown, isMain: boolean, options?: unknown) => string;

/** The same pinning for `require` (projects compiled to CommonJS). */
function pinCommonJsResolution(anchorFile: string, shared: Record<string, SharedPackage>): void {
  const moduleInternals = Module as unknown as { _resolveFilename: ResolveFilename };
  const original = moduleInternals._resolveFilename;
  const anchor = new Module(anchorFile);
  anchor.filename = anchorFile;
  anchor.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(
    fileURLToPath(new URL(".", pathToFileURL(anchorFile))),
  );
  moduleInternals._resolveFilename = function (request, parent, isMain, options) {
    if (PINNED_PACKAGES.test(request)) return original.call(this, request, anchor, isMain, options);
    const resolved = original.call(this, request, parent, isMain, options);
    const name = sharedPackageOf(request, shared);
    if (!name || !isSameVersionCopy(name, resolved, shared)) return resolved;
    return original.call(this, request, anchor, isMain, options);
  };
}

/** The directories of the modules of the project Berth imports (graphs, auth, app, embedder) and the project's own. */
export function projectModuleDirs(project: ProjectConfig): string[] {
  const embed = project.store.index?.embed;
  const files = [
    ...project.graphs.map((graph) => graph.file),
    project.auth.module?.file,
    project.http.app?.file,
    embed?.kind === "module" ? embed.file : undefined,
  ];
  return [project.projectDir, ...files.filter((file): file is string => file !== undefined).map((file) => dirname(file))];
}
