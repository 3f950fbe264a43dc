import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";

/** Where `berth compile` writes a project's TypeScript modules as JavaScript, relative to the folder of langgraph.json. */
export const COMPILED_DIR = join(".berth", "compiled");

/** The file in COMPILED_DIR that says what it holds. */
export const COMPILED_MANIFEST = "manifest.json";

/** The manifest's layout; a manifest of another layout is not read. */
export const COMPILED_FORMAT = 1;

/**
 * What COMPILED_DIR holds: each compiled module's source → its JavaScript, and
 * every file the JavaScript was made from with the SHA-256 of its content
 * then, all relative to the project's folder (the JavaScript to COMPILED_DIR).
 */
export interface CompiledManifest {
  format: typeof COMPILED_FORMAT;
  modules: Record<string, string>;
  inputs: Record<string, string>;
}

/** The SHA-256 of a file's content, hex. */
export function contentHash(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

/**
 * The project's compiled modules (absolute source path → absolute path of its
 * JavaScript), when COMPILED_DIR holds a manifest whose every input still has
 * the content it was compiled from; otherwise undefined, and the sources load
 * through the TypeScript loader. Content, not modification times: an artifact
 * copied into an image keeps its bytes but not always its times.
 */
export function readCompiledModules(projectDir: string): Map<string, string> | undefined {
  const dir = join(projectDir, COMPILED_DIR);
  const manifestFile = join(dir, COMPILED_MANIFEST);
  if (!existsSync(manifestFile)) return undefined;
  let manifest: CompiledManifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as CompiledManifest;
  } catch {
    return undefined;
  }
  if (manifest?.format !== COMPILED_FORMAT || typeof manifest.modules !== "object" || typeof manifest.inputs !== "object")
    return undefined;
  try {
    for (const [input, hash] of Object.entries(manifest.inputs)) {
      const file = within(projectDir, input);
      if (!file || !existsSync(file) || contentHash(file) !== hash) return undefined;
    }
  } catch {
    return undefined;
  }
  const modules = new Map<string, string>();
  for (const [source, output] of Object.entries(manifest.modules)) {
    const sourceFile = within(projectDir, source);
    const outputFile = typeof output === "string" ? within(dir, output) : undefined;
    if (!sourceFile || !outputFile || !existsSync(outputFile)) return undefined;
    modules.set(sourceFile, outputFile);
  }
  return modules;
}

/** Whether `file` is below `dir` (not `dir` itself). */
export function isBelow(dir: string, file: string): boolean {
  const inside = relative(dir, resolve(file));
  return inside !== "" && inside !== ".." && !inside.startsWith(`..${sep}`) && !isAbsolute(inside);
}

/** `path` (relative) resolved under `dir`, or undefined when it is absolute or leaves `dir`. */
function within(dir: string, path: string): string | undefined {
  if (typeof path !== "string" || isAbsolute(path)) return undefined;
  const file = resolve(dir, path);
  return isBelow(dir, file) ? file : undefined;
}
