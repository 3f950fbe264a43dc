import { readFileSync } from "node:fs";
import { parse as parseDotenv } from "dotenv";

export interface SecretEntry {
  name: string;
  value: string;
}

/**
 * The variables of a dotenv file, as `berth dev` reads a project's `.env`
 * (the same parser: quotes, `#` comments, multi-line quoted values). The file
 * is read here only: its variables travel as secrets, never the file.
 */
export function readEnvFile(path: string): SecretEntry[] {
  const variables = parseDotenv(readFileSync(path, "utf8"));
  return Object.entries(variables).map(([name, value]) => ({ name, value }));
}

/**
 * The deployment's secrets with `changes` applied: a name given gets the new
 * value, the others stay. Values already stored are sent back as the mask
 * the control plane answers ("********"), which keeps them.
 */
export function mergeSecrets(current: readonly SecretEntry[], changes: readonly SecretEntry[]): SecretEntry[] {
  const changed = new Map(changes.map((entry) => [entry.name, entry.value]));
  const kept = current.filter((entry) => !changed.has(entry.name));
  return [...kept, ...changes];
}
