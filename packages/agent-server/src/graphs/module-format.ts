import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * Whether Node loads a TypeScript module as CommonJS: `.cts` is, `.mts` is not; `.ts` and `.tsx` follow the nearest
 * package.json's `type`. Imports nothing else: the `berth` command asks before it loads a TypeScript loader.
 */
export function isCommonJsModule(file: string): boolean {
  if (file.endsWith(".cts")) return true;
  if (file.endsWith(".mts")) return false;
  for (let folder = dirname(file); ; folder = dirname(folder)) {
    const manifest = join(folder, "package.json");
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, "utf8")) as { type?: unknown }).type !== "module";
      } catch {
        return true; // unreadable: Node would fail on it anyway; treat it the safe way
      }
    }
    if (dirname(folder) === folder) return true;
  }
}
