import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { z } from "zod";
import {
  CheckpointerJson,
  type CheckpointerSettings,
  checkpointerSettings,
  unappliedCheckpointerKeys,
} from "./checkpointer-config.js";
import { AuthJson, type AuthSettings, authSettings } from "./auth-config.js";
import { ConfigError } from "./config-error.js";
import { HttpJson, type HttpSettings, httpSettings, unknownHttpKeys } from "./http-config.js";
import { configFromImageEnvironment, hasImageEnvironment } from "./image-environment.js";
import { StoreJson, type StoreSettings, storeSettings } from "./memory-store-config.js";
import { UiConfigJson, UiJson, type UiSettings, uiSettings } from "./ui-config.js";
import { WebhooksJson, type WebhooksJsonSection } from "./webhook-config.js";

export { ConfigError };

const GraphEntry = z.union([z.string().min(1), z.object({ path: z.string().min(1), description: z.string().optional() })]);

const LangGraphJson = z.object({
  graphs: z.record(z.string().min(1), GraphEntry).refine((graphs) => Object.keys(graphs).length > 0, {
    message: "at least one graph is required",
  }),
  env: z.union([z.record(z.string(), z.string()), z.string()]).optional(),
  store: StoreJson.nullish(),
  checkpointer: CheckpointerJson.nullish(),
  webhooks: WebhooksJson.nullish(),
  auth: AuthJson.nullish(),
  http: HttpJson.nullish(),
  ui: UiJson.nullish(),
  ui_config: UiConfigJson.nullish(),
});

const APPLIED_KEYS = new Set(["graphs", "env", "store", "checkpointer", "webhooks", "auth", "http", "ui", "ui_config"]);

const BUILD_SETTING = "a build setting of the official CLI's images; Berth builds from the project's package.json";
const NOT_YET = "not applied by Berth yet";

/** Keys of langgraph.json that are valid but have no effect in Berth, and why: each is named in a warning at start. */
const UNAPPLIED_KEYS: Record<string, string> = {
  dependencies: BUILD_SETTING,
  node_version: "Berth runs every project on its own Node.js",
  node_loader: "Berth loads TypeScript with tsx",
  dockerfile_lines: BUILD_SETTING,
  docker_compose_file: BUILD_SETTING,
  api_version: BUILD_SETTING,
  _INTERNAL_docker_tag: BUILD_SETTING,
  python_version: "a setting of Python projects",
  pip_config_file: "a setting of Python projects",
  base_image: BUILD_SETTING,
  image_distro: BUILD_SETTING,
};

export interface GraphSpec {
  graphId: string;
  /** Absolute path of the module. */
  file: string;
  /** The folder of langgraph.json: a graph that fails to load is told with paths relative to it. */
  projectDir?: string;
  /** Export name; "default" when the spec names none. */
  exportName: string;
  description?: string;
}

export interface ProjectConfig {
  configFile: string;
  projectDir: string;
  graphs: GraphSpec[];
  env: Record<string, string>;
  /** The long-term memory store's settings (`store` in langgraph.json; defaults without it). */
  store: StoreSettings;
  /** Thread TTL (`checkpointer.ttl` in langgraph.json; no expiry without it). */
  checkpointer: CheckpointerSettings;
  /** langgraph.json's `webhooks` (header templates are resolved once the project's env is applied: webhook-config.ts). */
  webhooks?: WebhooksJsonSection;
  warnings: string[];
  /** `auth` in langgraph.json: the project's handlers and the Studio and OpenAPI switches. */
  auth: AuthSettings;
  /** `http` in langgraph.json: CORS, route families, mount prefix, headers given to runs and logs, the project's app. */
  http: HttpSettings;
  /** `ui` and `ui_config` in langgraph.json: the components bundled for the SDK's `LoadExternalComponent`. */
  ui: UiSettings;
}

/** Finds langgraph.json from a directory or file argument. */
export function resolveConfigFile(pathArg: string): string {
  const target = resolve(pathArg);
  if (!existsSync(target)) throw new ConfigError(`${target} does not exist`);
  const file = statSync(target).isDirectory() ? join(target, "langgraph.json") : target;
  if (!existsSync(file)) throw new ConfigError(`no langgraph.json in ${target}`);
  return file;
}

/** `env`: where the official images' variables are looked for (LANGSERVE_GRAPHS, in a folder without langgraph.json). */
export function loadProjectConfig(pathArg: string, env: NodeJS.ProcessEnv): ProjectConfig {
  const { configFile, projectDir, raw } = readConfigSource(pathArg, env);
  const parsed = LangGraphJson.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
    throw new ConfigError(`${configFile} is invalid: ${problems.join("; ")}`);
  }
  const warnings = Object.keys(raw as object)
    .filter((key) => !APPLIED_KEYS.has(key))
    .map((key) =>
      key in UNAPPLIED_KEYS
        ? `${configFile}: "${key}" is ignored (${UNAPPLIED_KEYS[key]})`
        : `${configFile}: unknown key "${key}" is ignored`,
    );
  for (const key of unappliedCheckpointerKeys(parsed.data.checkpointer ?? undefined)) {
    warnings.push(`${configFile}: "checkpointer.${key}" is ignored (${NOT_YET})`);
  }
  const http = parsed.data.http ?? undefined;
  for (const key of unknownHttpKeys(http)) warnings.push(`${configFile}: unknown key "http.${key}" is ignored`);
  const graphs = Object.entries(parsed.data.graphs).map(([graphId, entry]) => parseGraphSpec(graphId, entry, projectDir));
  return {
    configFile,
    projectDir,
    graphs,
    env: loadEnv(parsed.data.env, projectDir),
    store: storeSettings(parsed.data.store ?? undefined, projectDir),
    checkpointer: checkpointerSettings(parsed.data.checkpointer ?? undefined),
    webhooks: parsed.data.webhooks ?? undefined,
    warnings,
    auth: authSettings(parsed.data.auth ?? undefined, projectDir),
    http: httpSettings(http, projectDir),
    ui: uiSettings(parsed.data.ui ?? undefined, parsed.data.ui_config ?? undefined, projectDir),
  };
}

/**
 * langgraph.json, or, in a folder without one, the variables the official
 * CLI's images carry it in (its local `deploy` builds FROM an image of Berth's).
 */
function readConfigSource(pathArg: string, env: NodeJS.ProcessEnv): { configFile: string; projectDir: string; raw: unknown } {
  const target = resolve(pathArg);
  if (
    hasImageEnvironment(env) &&
    existsSync(target) &&
    statSync(target).isDirectory() &&
    !existsSync(join(target, "langgraph.json"))
  ) {
    return { configFile: `${target} (LANGSERVE_GRAPHS)`, projectDir: target, raw: configFromImageEnvironment(env) };
  }
  const configFile = resolveConfigFile(pathArg);
  try {
    return { configFile, projectDir: dirname(configFile), raw: JSON.parse(readFileSync(configFile, "utf8")) };
  } catch (error) {
    throw new ConfigError(`${configFile} is not valid JSON: ${(error as Error).message}`);
  }
}

function parseGraphSpec(graphId: string, entry: z.infer<typeof GraphEntry>, projectDir: string): GraphSpec {
  const spec = typeof entry === "string" ? entry : entry.path;
  // The export name follows the last colon, unless that colon belongs to a Windows drive letter.
  const colon = spec.lastIndexOf(":");
  const hasExport = colon > 1;
  const modulePath = hasExport ? spec.slice(0, colon) : spec;
  const exportName = hasExport ? spec.slice(colon + 1) : "default";
  const file = isAbsolute(modulePath) ? modulePath : resolve(projectDir, modulePath);
  return {
    graphId,
    file,
    projectDir,
    exportName: exportName || "default",
    description: typeof entry === "string" ? undefined : entry.description,
  };
}

function loadEnv(env: Record<string, string> | string | undefined, projectDir: string): Record<string, string> {
  if (env === undefined) return {};
  if (typeof env !== "string") return env;
  const file = resolve(projectDir, env);
  if (!existsSync(file)) throw new ConfigError(`env file ${file} does not exist`);
  return parseDotenv(readFileSync(file));
}
