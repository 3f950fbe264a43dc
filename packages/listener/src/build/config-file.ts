import { existsSync } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import { join, sep } from "node:path";
import { BuildError } from "./errors.js";

/** How deep, and how many, JSON files are suggested when graph_config_path is wrong. */
const SUGGEST_DEPTH = 3;
const SUGGEST_MAX = 10;

/**
 * The absolute path of the revision's langgraph.json inside the unpacked
 * tarball. A wrong path is the most common upload mistake (a tarball made
 * from the parent folder puts everything under `project/`), so the error
 * lists the JSON files it did find.
 */
export async function locateConfig(root: string, graphConfigPath: string): Promise<string> {
  const relative = graphConfigPath.trim().replace(/^\.\//, "");
  if (relative === "" || relative.startsWith("/") || relative.split(/[\\/]/).includes("..")) {
    throw new BuildError(
      `graph_config_path "${graphConfigPath}" must be a relative path inside the tarball, like "langgraph.json"`,
    );
  }
  let candidate = join(root, relative);
  // A folder holding langgraph.json is accepted, as `berth dev <dir>` accepts it.
  if (existsSync(candidate) && (await stat(candidate)).isDirectory()) candidate = join(candidate, "langgraph.json");
  if (!existsSync(candidate) || !(await stat(candidate)).isFile()) {
    const found = await jsonFilesNear(root);
    const hint =
      found.length > 0 ? `JSON files near the tarball's root: ${found.join(", ")}` : "the tarball has no JSON file near its root";
    throw new BuildError(`graph_config_path "${graphConfigPath}" was not found in the tarball; ${hint}`);
  }
  // The archive's links were checked when unpacking; this is the last look before the file is read.
  const [real, realRoot] = await Promise.all([realpath(candidate), realpath(root)]);
  if (!real.startsWith(realRoot + sep)) throw new BuildError(`graph_config_path "${graphConfigPath}" leads outside the tarball`);
  return candidate;
}

/** langgraph.json files first, then other JSON files, breadth first, without node_modules and hidden folders. */
async function jsonFilesNear(root: string): Promise<string[]> {
  const found: string[] = [];
  let level = [""];
  for (let depth = 0; depth < SUGGEST_DEPTH && level.length > 0; depth += 1) {
    const next: string[] = [];
    for (const dir of level) {
      const entries = await readdir(join(root, dir), { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
        if (entry.isDirectory() && entry.name !== "node_modules" && !entry.name.startsWith(".")) next.push(path);
        else if (entry.isFile() && entry.name.endsWith(".json")) found.push(path);
      }
    }
    level = next.sort();
  }
  const rank = (path: string) => (path.endsWith("langgraph.json") ? 0 : 1);
  return found.sort((a, b) => rank(a) - rank(b)).slice(0, SUGGEST_MAX);
}
