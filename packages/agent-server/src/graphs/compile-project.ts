import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import type { BuildOptions, Message, Metafile } from "esbuild";
import { loadProjectConfig, type ProjectConfig } from "../config/langgraph-config.js";
import {
  COMPILED_DIR,
  COMPILED_FORMAT,
  COMPILED_MANIFEST,
  type CompiledManifest,
  contentHash,
  isBelow,
} from "./compiled-modules.js";
import { isCommonJsModule } from "./module-format.js";

export { ConfigError } from "../config/config-error.js";

/** What `berth compile` did: the modules it compiled, or why the project keeps loading its sources through tsx. */
export type CompileResult = { compiled: string[]; durationMs: number } | { compiled: []; reason: string; durationMs: number };

const TYPESCRIPT_MODULE = /\.[cm]?tsx?$/;

/**
 * Source text that would mean something else once bundled into COMPILED_DIR: `import.meta` (a module's own URL, which
 * would become the bundle's), CommonJS's `require`, `__dirname` and `__filename`, and `import()` of a computed path
 * (resolved against the bundle's folder instead of the source's).
 */
const LOCATION_DEPENDENT: [RegExp, string][] = [
  [/\bimport\.meta\b/, "import.meta"],
  [/\brequire\s*\(/, "require()"],
  [/\b__dirname\b|\b__filename\b/, "__dirname or __filename"],
  [/\bimport\s*\(\s*(?!["'][^"'`]*["']\s*[,)])/, "import() of a computed path"],
];

/**
 * Transpiles the project's TypeScript modules (graphs, `auth.path`, `http.app`, the store's embedder) into
 * COMPILED_DIR beside langgraph.json, with a manifest the agent server reads at start: `berth serve` then imports
 * JavaScript with no TypeScript loader (a loader thread costs ~0.35 s of a start and ~30 MB). One esbuild pass over all
 * of them, split into shared chunks, so a module two graphs import stays one instance; packages stay imports, resolved
 * from the project's node_modules as before. A project whose modules could behave differently from another folder
 * (see LOCATION_DEPENDENT), that is CommonJS, or imports files outside the project's folder keeps its sources:
 * nothing is written then and the reason is returned. Whatever COMPILED_DIR held before is replaced.
 */
export async function compileProject(configPath: string): Promise<CompileResult> {
  const started = Date.now();
  const config = loadProjectConfig(configPath, process.env);
  const projectDir = config.projectDir;
  const target = join(projectDir, COMPILED_DIR);
  rmSync(target, { recursive: true, force: true });
  const kept = (reason: string): CompileResult => ({ compiled: [], reason, durationMs: Date.now() - started });

  const entries = [...new Set(projectModules(config).filter((file) => TYPESCRIPT_MODULE.test(file)))];
  if (entries.length === 0) return kept("the project has no TypeScript modules");
  for (const file of entries) {
    if (!existsSync(file)) return kept(`${relative(projectDir, file)} does not exist`);
    if (!isBelow(projectDir, file)) return kept(`${file} is outside the project's folder`);
    if (isCommonJsModule(file)) return kept(`${relative(projectDir, file)} is CommonJS`);
  }

  const staging = `${target}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  const { build, formatMessages } = await import("esbuild");
  const options: BuildOptions = {
    entryPoints: entries,
    absWorkingDir: projectDir,
    outbase: projectDir,
    outdir: staging,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: `node${process.versions.node.split(".")[0]}`,
    packages: "external",
    // A function's or class's name stays what the source says when bundling renames it (names show in traces, tools).
    keepNames: true,
    sourcemap: "linked",
    metafile: true,
    logLevel: "silent",
  };
  try {
    let metafile: Metafile;
    try {
      metafile = (await build(options)).metafile!;
    } catch (error) {
      const errors = (error as { errors?: Message[] }).errors;
      const detail = errors?.length
        ? (await formatMessages(errors.slice(0, 1), { kind: "error", color: false })).join("").trim()
        : (error as Error).message;
      return kept(`esbuild failed: ${detail}`);
    }
    const refusal = refuseInputs(projectDir, metafile);
    if (refusal) return kept(refusal);
    const manifest: CompiledManifest = { format: COMPILED_FORMAT, modules: {}, inputs: {} };
    for (const input of Object.keys(metafile.inputs)) manifest.inputs[input] = contentHash(join(projectDir, input));
    const tsconfig = join(projectDir, "tsconfig.json");
    if (existsSync(tsconfig)) manifest.inputs["tsconfig.json"] = contentHash(tsconfig);
    for (const [output, meta] of Object.entries(metafile.outputs)) {
      if (!meta.entryPoint) continue;
      manifest.modules[normalized(meta.entryPoint)] = relative(staging, join(projectDir, output));
    }
    writeFileSync(join(staging, COMPILED_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    mkdirSync(dirname(target), { recursive: true });
    renameSync(staging, target);
    return { compiled: Object.keys(manifest.modules), durationMs: Date.now() - started };
  } finally {
    // What esbuild wrote, unless it became COMPILED_DIR above.
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Why the bundle's inputs cannot run from COMPILED_DIR as they do from their folders, if they cannot. */
function refuseInputs(projectDir: string, metafile: Metafile): string | undefined {
  for (const [input, meta] of Object.entries(metafile.inputs)) {
    const file = join(projectDir, input);
    if (!isBelow(projectDir, file) || input.split(/[\\/]/).includes("node_modules"))
      return `${input} is outside the project's own sources`;
    if (meta.format === "cjs") return `${input} is CommonJS`;
    const nested = nestedNodeModules(projectDir, dirname(file));
    if (nested) return `${input} resolves packages from ${relative(projectDir, nested)}, which the compiled module would not see`;
    if (!/\.[cm]?[jt]sx?$/.test(input)) continue;
    const text = readFileSync(file, "utf8");
    for (const [pattern, what] of LOCATION_DEPENDENT) if (pattern.test(text)) return `${input} uses ${what}`;
  }
  return undefined;
}

/** A node_modules folder between `dir` and the project's folder (the project's own excluded), if any. */
function nestedNodeModules(projectDir: string, dir: string): string | undefined {
  for (let folder = dir; isBelow(projectDir, folder); folder = dirname(folder)) {
    if (existsSync(join(folder, "node_modules"))) return join(folder, "node_modules");
  }
  return undefined;
}

/** The modules langgraph.json names that the agent server imports. */
function projectModules(config: ProjectConfig): string[] {
  const embed = config.store.index?.embed;
  return [
    ...config.graphs.map((graph) => graph.file),
    ...(config.auth.module ? [config.auth.module.file] : []),
    ...(config.http.app ? [config.http.app.file] : []),
    ...(embed?.kind === "module" ? [embed.file] : []),
  ];
}

/** esbuild's paths use `/`; the manifest's are the platform's, relative to the project's folder. */
function normalized(path: string): string {
  return path.split("/").join(sep);
}
