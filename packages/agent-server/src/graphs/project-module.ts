import { pathToFileURL } from "node:url";

const TYPESCRIPT = /\.[cm]?tsx?$/;

/** Berth itself runs compiled; from its TypeScript sources (tests, development) a TypeScript loader is already in place. */
const RUNNING_FROM_SOURCE = import.meta.url.endsWith(".ts");

let typescriptLoader: Promise<void> | undefined;

/**
 * Imports a module of the project (a graph, `auth.path`, `http.app`, an
 * embedder). tsx is registered the first time a TypeScript module is imported,
 * so a project of JavaScript never pays for a TypeScript loader.
 */
export async function importProjectModule(file: string): Promise<Record<string, unknown>> {
  if (TYPESCRIPT.test(file) && !RUNNING_FROM_SOURCE) await (typescriptLoader ??= registerTypeScript());
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}

/**
 * tsx's own entry, as `node --import tsx` loads it, for the whole process
 * rather than scoped to the import: a scoped tsx import gives every module it
 * reaches, packages included, its own instance, and LangGraph's classes must
 * be the ones Berth uses. The `berth` command loads it before the agent server
 * already when langgraph.json names TypeScript modules (see the CLI's
 * load-agent-server.ts); this covers the others (a server started in-process).
 */
async function registerTypeScript(): Promise<void> {
  const tsx = "tsx"; // untyped: loaded for its hooks only
  await import(tsx);
}
