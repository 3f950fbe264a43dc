// ESM resolve hook (runs in Node's loader thread): imports of the pinned
// LangChain packages resolve from Berth's own install, whoever imports them;
// so do imports of a package shared by version (pin-packages.ts) that would
// load a copy of the same version as Berth's.
import { fileURLToPath } from "node:url";
import { isSameVersionCopy, sharedPackageOf } from "./shared-copies.mjs";

let anchorUrl;
let pinned;
let shared;

export function initialize(data) {
  anchorUrl = data.anchorUrl;
  pinned = new RegExp(data.pattern);
  shared = data.shared;
}

export async function resolve(specifier, context, nextResolve) {
  if (context.parentURL === anchorUrl) return nextResolve(specifier, context);
  if (pinned.test(specifier)) return nextResolve(specifier, { ...context, parentURL: anchorUrl });
  const name = sharedPackageOf(specifier, shared);
  const resolved = await nextResolve(specifier, context);
  const file = name && resolved.url.startsWith("file:") ? fileURLToPath(resolved.url) : undefined;
  return file && isSameVersionCopy(name, file, shared) ? nextResolve(specifier, { ...context, parentURL: anchorUrl }) : resolved;
}
