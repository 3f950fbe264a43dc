import { accessSync, constants } from "node:fs";
import { join } from "node:path";

/** The executable `name`, looked up in the system's directories first, then the absolute entries of `path`. */
export function findProgram(name: string, path = ""): string | undefined {
  // This runs as root, and PATH may name project folders (node_modules/.bin).
  for (const dir of ["/usr/bin", "/usr/sbin", "/bin", "/sbin", ...path.split(":").filter((dir) => dir.startsWith("/"))]) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not there
    }
  }
  return undefined;
}
