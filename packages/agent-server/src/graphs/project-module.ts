import { pathToFileURL } from "node:url";

const TYPESCRIPT_MODULE = /\.[cm]?tsx?$/;

let typescriptLoader: (() => Promise<unknown>) | undefined;
let typescriptLoaded: Promise<unknown> | undefined;
let preparation: (() => void) | undefined;
let compiledModules: ReadonlyMap<string, string> | undefined;

/**
 * What must be in place before the project's first module is imported (its LangChain packages pinned to Berth's
 * copies): run once, then. A resolve hook registered earlier would serve every module Berth loads after it, LangChain
 * included, a round trip to the hooks thread each.
 */
export function beforeProjectModules(prepare: () => void): void {
  preparation = prepare;
}

/**
 * How the project's TypeScript modules get their loader when it is not in place yet: `load` runs once, before the
 * first TypeScript module is imported. The `berth` command passes tsx's registration, so a project whose graphs
 * `berth dev` imports after listening starts tsx's hooks thread then, not before `/ok`.
 */
export function useTypeScriptLoader(load: () => Promise<unknown>): void {
  typescriptLoader = load;
}

/**
 * The project's modules compiled ahead of time (`berth compile`): source path → its JavaScript, imported instead of the
 * source, with no TypeScript loader. Stack traces are mapped back to the sources through the source maps written
 * beside them.
 */
export function useCompiledModules(modules: ReadonlyMap<string, string>): void {
  compiledModules = modules;
}

/**
 * Imports a module of the project (a graph, `auth.path`, `http.app`, an
 * embedder). TypeScript modules need a loader: the one useTypeScriptLoader
 * gave, or tsx in place before the agent server loads (the `berth` command
 * loads it so when a TypeScript module is CommonJS, see the CLI's
 * load-agent-server.ts; Berth's tests run from sources under tsx already).
 */
export async function importProjectModule(file: string): Promise<Record<string, unknown>> {
  const prepare = preparation;
  preparation = undefined;
  prepare?.();
  const compiled = compiledModules?.get(file);
  if (compiled) {
    // Enabled here, after Berth and LangChain loaded: their own source maps are then not read.
    process.setSourceMapsEnabled(true);
    return (await import(pathToFileURL(compiled).href)) as Record<string, unknown>;
  }
  if (typescriptLoader && TYPESCRIPT_MODULE.test(file)) await (typescriptLoaded ??= typescriptLoader());
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}
