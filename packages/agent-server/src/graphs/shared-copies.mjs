// Which copy of a package shared by version (pin-packages.ts) serves an import: plain JavaScript, as Node's loader
// thread (pin-hooks.mjs) imports it too.
import { readFileSync } from "node:fs";
import { join, sep } from "node:path";

/** The versions of the copies looked at, by package directory. */
const copyVersions = new Map();

/** The name of the package shared by version that `specifier` imports, if it imports one. */
export function sharedPackageOf(specifier, shared) {
  const name = specifier.startsWith("@") ? specifier.split("/", 2).join("/") : specifier.split("/", 1)[0];
  return name !== undefined && Object.hasOwn(shared, name) ? name : undefined;
}

/** Whether `file`, a module of package `name`, is in another copy than Berth's, of the same version (Berth's then serves). */
export function isSameVersionCopy(name, file, shared) {
  const berths = shared[name];
  const marker = `${sep}node_modules${sep}${name.split("/").join(sep)}${sep}`;
  const at = file.lastIndexOf(marker);
  if (!berths || at < 0) return false;
  const root = file.slice(0, at + marker.length - 1);
  if (root === berths.root) return false;
  let version = copyVersions.get(root);
  if (version === undefined) {
    try {
      version = String(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version);
    } catch {
      version = "";
    }
    copyVersions.set(root, version);
  }
  return version === berths.version;
}
