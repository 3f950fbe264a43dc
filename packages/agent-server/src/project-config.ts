import { loadProjectConfig } from "./config/langgraph-config.js";
import { environment } from "./config/settings.js";

export { ConfigError } from "./config/config-error.js";

/**
 * What the server would warn about at start when reading a project's langgraph.json (keys it ignores, and why),
 * without loading any of the project's modules: `berth deploy` prints these before uploading. Throws ConfigError
 * when the file is not a valid langgraph.json.
 */
export function projectConfigWarnings(config: string): string[] {
  return loadProjectConfig(config, environment()).warnings;
}
