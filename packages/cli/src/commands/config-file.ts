import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { configHomeFromEnv } from "../settings.js";

/** What `berth login` saves: a control plane, a key of it and, optionally, the workspace to act in. */
export interface SavedLogin {
  url: string;
  api_key: string;
  tenant_id: string | null;
}

/** A config file that exists but cannot be used (main.ts reports it by this name, as a usage error). */
export class ConfigFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigFileError";
  }
}

/** `$XDG_CONFIG_HOME/berth/config.json`, else `~/.config/berth/config.json` (a relative XDG_CONFIG_HOME is ignored, as the spec says). */
export function configFilePath(): string {
  const xdg = configHomeFromEnv();
  const base = xdg && isAbsolute(xdg) ? xdg : join(homedir(), ".config");
  return join(base, "berth", "config.json");
}

export function readSavedLogin(): SavedLogin | undefined {
  const file = configFilePath();
  if (!existsSync(file)) return undefined;
  let saved: Partial<SavedLogin>;
  try {
    saved = JSON.parse(readFileSync(file, "utf8")) as Partial<SavedLogin>;
  } catch (error) {
    throw new ConfigFileError(`${file} is not JSON (${(error as Error).message}); run berth login again or delete it`);
  }
  if (typeof saved.url !== "string" || typeof saved.api_key !== "string") {
    throw new ConfigFileError(`${file} lacks url or api_key; run berth login again or delete it`);
  }
  return { url: saved.url, api_key: saved.api_key, tenant_id: typeof saved.tenant_id === "string" ? saved.tenant_id : null };
}

/** Writes the file readable by its owner only (in a folder only its owner enters), replacing any earlier one whole. */
export function writeSavedLogin(login: SavedLogin): string {
  const file = configFilePath();
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // mkdir's mode applies only to a folder it creates; this one is Berth's own.
  chmodSync(dirname(file), 0o700);
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  renameSync(partial, file);
  return file;
}

/** Deletes the file; false when there was none. */
export function removeSavedLogin(): boolean {
  const file = configFilePath();
  if (!existsSync(file)) return false;
  rmSync(file);
  return true;
}
