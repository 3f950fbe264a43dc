import { readFileSync } from "node:fs";

/**
 * Berth's version: the packages' version, released in lockstep (a test keeps
 * every package.json at one version). Read from this package's package.json,
 * which sits beside both src/ and dist/.
 */
export const BERTH_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
