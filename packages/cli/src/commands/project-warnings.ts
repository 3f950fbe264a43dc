import { sep } from "node:path";
import { ConfigError, projectConfigWarnings } from "@berth/agent-server/project-config";

/** `/home/me/agent/langgraph.json: ...` → `langgraph.json: ...`: the user knows their project by its own paths. */
function relative(message: string, root: string): string {
  return message.split(`${root.replace(/[/\\]+$/, "")}${sep}`).join("");
}

/**
 * The project's langgraph.json read by the agent server's own loader, as the deployment's server will read it
 * (no module of the project is loaded): the warnings it would log at start, or why the file is invalid.
 */
export function projectWarnings(root: string, configFile: string): { warnings: string[] } | { invalid: string } {
  try {
    return { warnings: projectConfigWarnings(configFile).map((warning) => relative(warning, root)) };
  } catch (error) {
    if (error instanceof ConfigError) return { invalid: relative(error.message, root) };
    throw error;
  }
}
