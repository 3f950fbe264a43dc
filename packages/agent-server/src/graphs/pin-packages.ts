import Module, { register } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Packages whose classes cross the boundary between a project's graphs and
 * Berth (graphs, messages, commands, interrupts, checkpointers). A project may
 * bring its own copies; a second copy breaks `instanceof` checks inside
 * LangGraph, so every import of them resolves to Berth's copy. Berth's own
 * helper for graphs (@berth/graph-auth) resolves the same way: projects do not install it.
 */
const PINNED_PACKAGES = /^(@langchain\/(core|langgraph|langgraph-checkpoint)|@berth\/graph-auth)(\/.*)?$/;

let pinnedOnce = false;

export function pinLangChainPackages(): void {
  if (pinnedOnce) return;
  pinnedOnce = true;
  const anchorUrl = import.meta.url;
  register(new URL("./pin-hooks.mjs", anchorUrl), {
    data: { anchorUrl, pattern: PINNED_PACKAGES.source },
  });
  pinCommonJsResolution(fileURLToPath(anchorUrl));
}

type ResolveFilename = (request: string, parent: unknown, isMain: boolean, options?: unknown) => string;

/** The same pinning for `require` (projects compiled to CommonJS). */
function pinCommonJsResolution(anchorFile: string): void {
  const moduleInternals = Module as unknown as { _resolveFilename: ResolveFilename };
  const original = moduleInternals._resolveFilename;
  const anchor = new Module(anchorFile);
  anchor.filename = anchorFile;
  anchor.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(
    fileURLToPath(new URL(".", pathToFileURL(anchorFile))),
  );
  moduleInternals._resolveFilename = function (request, parent, isMain, options) {
    if (PINNED_PACKAGES.test(request)) return original.call(this, request, anchor, isMain, options);
    return original.call(this, request, parent, isMain, options);
  };
}
