import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

type AgentServer = typeof import("@berth/agent-server");

const TYPESCRIPT_MODULE = /\.[cm]?tsx?(:|$)/;

/**
 * The agent server's package, loaded for the project at `configPath`: when
 * the project's modules (graphs, `auth.path`, `http.app`, an embedder) include
 * TypeScript, tsx is loaded first, as `node --import tsx` would (its hooks
 * must be in place before the modules it will serve are loaded, or TypeScript
 * files of a CommonJS scope lose their named exports). A project of
 * JavaScript never loads a TypeScript loader.
 */
export async function loadAgentServer(configPath: string): Promise<AgentServer> {
  if (projectModules(configPath).some((path) => TYPESCRIPT_MODULE.test(path))) {
    const tsx = "tsx"; // untyped: loaded for its hooks only
    await import(tsx);
  }
  return import("@berth/agent-server");
}

/** The module paths langgraph.json names; none when it cannot be read (the agent server then says why). */
function projectModules(configPath: string): string[] {
  try {
    const file = existsSync(configPath) && statSync(configPath).isDirectory() ? join(configPath, "langgraph.json") : configPath;
    const config = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    const graphs = Object.values((config.graphs as Record<string, unknown> | undefined) ?? {}).map((graph) =>
      typeof graph === "object" && graph !== null ? (graph as { path?: unknown }).path : graph,
    );
    const auth = (config.auth as { path?: unknown } | undefined)?.path;
    const app = (config.http as { app?: unknown } | undefined)?.app;
    const embed = (config.store as { index?: { embed?: unknown } } | undefined)?.index?.embed;
    return [...graphs, auth, app, embed].filter((path): path is string => typeof path === "string");
  } catch {
    return [];
  }
}
