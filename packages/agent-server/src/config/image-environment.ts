import { ConfigError } from "./config-error.js";

/**
 * The official CLI's images carry langgraph.json as environment variables
 * (its generated Dockerfile writes `ENV LANGSERVE_GRAPHS=...` and the like)
 * instead of the file. Each variable holds one key's JSON value.
 */
const IMAGE_VARIABLES: Record<string, string> = {
  LANGSERVE_GRAPHS: "graphs",
  LANGGRAPH_STORE: "store",
  LANGGRAPH_AUTH: "auth",
  LANGGRAPH_HTTP: "http",
  LANGGRAPH_WEBHOOKS: "webhooks",
  LANGGRAPH_UI: "ui",
  LANGGRAPH_UI_CONFIG: "ui_config",
  LANGGRAPH_CHECKPOINTER: "checkpointer",
};

/** True when the environment describes a project the way the official CLI's images do. */
export function hasImageEnvironment(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.LANGSERVE_GRAPHS?.trim());
}

/** The langgraph.json those variables stand for, as parsed JSON (validated like the file afterwards). */
export function configFromImageEnvironment(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const [variable, key] of Object.entries(IMAGE_VARIABLES)) {
    const text = env[variable]?.trim();
    if (!text) continue;
    try {
      config[key] = JSON.parse(text);
    } catch (error) {
      throw new ConfigError(`${variable} is not valid JSON: ${(error as Error).message}`);
    }
  }
  return config;
}
