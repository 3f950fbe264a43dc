import { pathToFileURL } from "node:url";

/**
 * Imports a module of the project (a graph, `auth.path`, `http.app`, an
 * embedder). TypeScript modules need tsx in place before the agent server
 * loads: the `berth` command loads it when langgraph.json names any (the CLI's
 * load-agent-server.ts); Berth's tests run from sources under tsx already.
 */
export async function importProjectModule(file: string): Promise<Record<string, unknown>> {
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}
