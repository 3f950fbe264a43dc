import { existsSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Message, OutputFile, Plugin } from "esbuild";
import { ConfigError } from "../config/config-error.js";
import type { UiEntry, UiSettings } from "../config/ui-config.js";

/** One file of a bundle, served at `/ui/{name}/{basename}`. */
export interface UiAsset {
  basename: string;
  contents: Uint8Array;
}

export interface UiBundle {
  name: string;
  /** The script's global (`__LGUI_<name>`), whose `render(component, shadowRootId)` the HTML fragment calls. */
  globalName: string;
  /** `entrypoint.js`, and `entrypoint.css` when the components import styles. */
  assets: UiAsset[];
}

export type UiBundles = ReadonlyMap<string, UiBundle>;

/**
 * Always shared with the page, as the reference bundler has them: the SDK's
 * `bootstrapUiContext()` hands the bundle the page's copies of these.
 */
const ALWAYS_SHARED = ["react", "react-dom", "@langchain/langgraph-sdk", "@langchain/langgraph-sdk/react-ui"];

/** The name's global as the reference derives it: anything but letters and digits becomes `_`. */
export function uiGlobalName(name: string): string {
  return `__LGUI_${name.replace(/[^a-zA-Z0-9]/g, "_")}`;
}

/**
 * Bundles every `ui` entry for the browser, one IIFE per name, and writes it to
 * `cacheDir/<name>/` when given. A component file that is missing or does not
 * bundle is a ConfigError naming it, so a broken UI stops the start (and `berth check`).
 */
export async function bundleUi(settings: UiSettings, cacheDir?: string): Promise<UiBundles> {
  const bundles = new Map<string, UiBundle>();
  // One after another: the first broken file is the one reported, whatever the timing.
  for (const entry of settings.entries) {
    const bundle = await bundleEntry(entry, settings.shared);
    if (cacheDir) await writeBundle(bundle, join(cacheDir, encodeURIComponent(entry.name)));
    bundles.set(entry.name, bundle);
  }
  return bundles;
}

async function bundleEntry(entry: UiEntry, shared: string[]): Promise<UiBundle> {
  // esbuild loads only for projects that have ui components.
  const { build, formatMessages } = await import("esbuild");
  if (!existsSync(entry.file)) throw new ConfigError(`ui "${entry.name}": ${entry.file} does not exist`);
  const globalName = uiGlobalName(entry.name);
  try {
    const result = await build({
      stdin: { contents: entrySource(entry.file), resolveDir: dirname(entry.file), sourcefile: "ui.entrypoint.js", loader: "js" },
      absWorkingDir: dirname(entry.file),
      // Only named: with write off, nothing is written there; the names give `entrypoint.js` and `entrypoint.css`.
      outfile: join(dirname(entry.file), "entrypoint.js"),
      write: false,
      bundle: true,
      platform: "browser",
      format: "iife",
      target: "es2020",
      jsx: "automatic",
      globalName,
      logLevel: "silent",
      plugins: [sharedModules([...ALWAYS_SHARED, ...shared])],
    });
    return {
      name: entry.name,
      globalName,
      assets: result.outputFiles.map((file) => ({ basename: basename(file.path), contents: withRegistryLookup(file) })),
    };
  } catch (error) {
    const errors = (error as { errors?: Message[] }).errors;
    const detail = errors?.length
      ? (await formatMessages(errors, { kind: "error", color: false })).join("").trim()
      : (error as Error).message;
    throw new ConfigError(`ui "${entry.name}": ${entry.file} does not bundle:\n${detail}`);
  }
}

/**
 * The bundle's entry: the project's components (its default export maps names to components),
 * and the `render` the fragment's script calls once loaded. It mounts into the shadow root the
 * SDK's `LoadExternalComponent` made, and hands the component to the SDK's store, which renders
 * it with the message's props in the page's React.
 */
function entrySource(file: string): string {
  return [
    `import components from ${JSON.stringify(file)};`,
    "export function render(name, shadowRootId) {",
    "  const root = document.getElementById(shadowRootId)?.shadowRoot;",
    '  if (!root) throw new Error("no shadow root with id " + shadowRootId);',
    '  const target = document.createElement("div");',
    "  root.appendChild(target);",
    '  globalThis[Symbol.for("LGUI_EXT_STORE")].respond(shadowRootId, components[name], target);',
    "}",
  ].join("\n");
}

/**
 * The page's module registry the SDK's `bootstrapUiContext()` fills. Bundles must name it as written
 * here: the reference's clients (and its API suite) look for this text in a served bundle.
 */
const LGUI_REQUIRE = 'globalThis[Symbol.for("LGUI_REQUIRE")]';
/** Stands for {@link LGUI_REQUIRE} while bundling: esbuild would print the lookup with a `@__PURE__` comment inside. */
const LGUI_REQUIRE_PLACEHOLDER = "__berth_lgui_require__";

/**
 * Shared modules (and their subpaths) are not bundled: each import reads the page's
 * copy from the SDK's registry, so a component's hooks run in the page's React.
 */
function sharedModules(names: string[]): Plugin {
  const escaped = names.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const filter = new RegExp(`^(${escaped.join("|")})(/.*)?$`);
  return {
    name: "berth-ui-shared",
    setup(build) {
      build.onResolve({ filter }, (args) => ({ path: args.path, namespace: "berth-ui-shared" }));
      build.onLoad({ filter: /.*/, namespace: "berth-ui-shared" }, (args) => ({
        contents: [
          `if (typeof ${LGUI_REQUIRE_PLACEHOLDER} !== "function") {`,
          `  throw new Error(${JSON.stringify(`${args.path} is shared with the page, which has not loaded @langchain/langgraph-sdk/react-ui`)});`,
          "}",
          `module.exports = ${LGUI_REQUIRE_PLACEHOLDER}(${JSON.stringify(args.path)});`,
        ].join("\n"),
        loader: "js",
      }));
    },
  };
}

/** The script with the registry's lookup in place of its placeholder. */
function withRegistryLookup(file: OutputFile): Uint8Array {
  if (!file.path.endsWith(".js")) return file.contents;
  return new TextEncoder().encode(file.text.replaceAll(LGUI_REQUIRE_PLACEHOLDER, LGUI_REQUIRE));
}

async function writeBundle(bundle: UiBundle, dir: string): Promise<void> {
  // A fresh folder: assets of an earlier build (a CSS file since removed) must not linger.
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const asset of bundle.assets) await writeFile(join(dir, asset.basename), asset.contents);
}
