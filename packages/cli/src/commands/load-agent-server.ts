import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { isCommonJsModule } from "@berth/agent-server/module-format";

type AgentServer = typeof import("@berth/agent-server");

const TYPESCRIPT_MODULE = /\.[cm]?tsx?$/;

/**
 * The agent server's package, loaded for the project at `configPath`. When the
 * project's modules (graphs, `auth.path`, `http.app`, an embedder) include
 * TypeScript, tsx is loaded too. Its hooks serve every module loaded after
 * them, a round trip to their thread each, so they are registered after the
 * agent server and LangChain are loaded (a third less start time and memory),
 * by the agent server just before it imports the first TypeScript module
 * (`berth dev` does so after it listens) — unless a TypeScript module is
 * CommonJS (`.cts`, or `.ts` under a package.json without `"type":
 * "module"`): such a file loses its named exports unless the hooks were in
 * place before anything else loaded, as with `node --import tsx`. A project of
 * JavaScript never loads a TypeScript loader, nor does one `berth compile`
 * compiled when `compiled` is set (`berth serve`, `berth check`; not `berth
 * dev`, whose sources change under it) and the compilation is of their
 * current content.
 */
export async function loadAgentServer(configPath: string, options: { compiled?: boolean } = {}): Promise<AgentServer> {
  const folder = projectFolder(configPath);
  const typescript = projectModules(configPath)
    .map((path) => resolve(folder, path.replace(/:[^:/\\]*$/, "")))
    .filter((file) => TYPESCRIPT_MODULE.test(file));
  if (typescript.length === 0) return import("@berth/agent-server");
  if (typescript.some(isCommonJsModule)) {
    await loadTsx();
    return import("@berth/agent-server");
  }
  const server = await import("@berth/agent-server");
  const compiled = options.compiled ? server.readCompiledModules(resolve(folder)) : undefined;
  if (compiled && typescript.every((file) => compiled.has(file))) server.useCompiledModules(compiled);
  else server.useTypeScriptLoader(loadTsx);
  return server;
}

function loadTsx(): Promise<unknown> {
  const tsx = "tsx"; // untyped: loaded for its hooks only
  return import(tsx);
}

function projectFolder(configPath: string): string {
  return existsSync(configPath) && statSync(configPath).isDirectory() ? configPath : dirname(configPath);
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
