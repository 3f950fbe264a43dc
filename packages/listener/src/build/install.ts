import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { BuildSandbox } from "./build-sandbox.js";
import type { BuildLog } from "./errors.js";
import { InstallCache } from "./install-cache.js";
import { runCommand } from "./run-command.js";

export interface InstallPlan {
  command: string;
  /** How the step is named in the log and in errors. */
  label: string;
  /** The lockfile at the project root, if any: without one an install is not reproducible, so it is not cached. */
  lockfile?: string;
}

export interface InstallOptions {
  /** The tarball root, where the install runs. */
  root: string;
  installCommand?: string | null;
  cacheDir: string;
  env: Record<string, string>;
  log: BuildLog;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Where the install command runs; the cache is handled outside it, by the listener. */
  sandbox?: BuildSandbox;
}

export interface InstallOutcome {
  /** What ran (or would have run, on a cache hit); undefined when there is nothing to install. */
  plan?: InstallPlan;
  cacheHit: boolean;
}

/** Lockfiles, in the order they are looked for, and the install each implies. */
const LOCKFILES: ReadonlyArray<{ file: string; command: string }> = [
  { file: "package-lock.json", command: "npm ci" },
  { file: "npm-shrinkwrap.json", command: "npm ci" },
  { file: "yarn.lock", command: "yarn install --frozen-lockfile" },
  { file: "pnpm-lock.yaml", command: "pnpm install --frozen-lockfile" },
];

/** Package-manager settings at the root that change what an install produces (registry, hoisting, hooks). */
export const INSTALL_SETTINGS = [".npmrc", ".yarnrc", ".yarnrc.yml", "pnpm-workspace.yaml", ".pnpmfile.cjs"];

/** Bumped when the layout of cache entries changes, so old entries are ignored. */
const CACHE_FORMAT = "berth-install-cache-v1";

/** Decides how the project at `root` is installed: the revision's install_command, else from its lockfile, else nothing. */
export function planInstall(root: string, installCommand?: string | null): InstallPlan | undefined {
  const lock = LOCKFILES.find(({ file }) => existsSync(join(root, file)));
  if (installCommand && installCommand.trim() !== "") {
    return { command: installCommand, label: "install_command", lockfile: lock?.file };
  }
  if (lock) return { command: lock.command, label: `install (from ${lock.file})`, lockfile: lock.file };
  if (existsSync(join(root, "package.json")))
    return { command: "npm install", label: "install (package.json without a lockfile)" };
  return undefined;
}

/**
 * The cache key of an install: sha256 of the lockfile, package.json, the
 * package manager's settings files, the command and the Node version and
 * platform (native addons are built for one ABI). Each part is hashed
 * separately, so no concatenation of two parts can collide with another.
 */
export async function installCacheKey(root: string, plan: InstallPlan & { lockfile: string }): Promise<string> {
  const key = createHash("sha256");
  const part = (label: string, value: string | Buffer) =>
    key.update(`${label}\0${createHash("sha256").update(value).digest("hex")}\n`);
  part("format", CACHE_FORMAT);
  part(`lockfile:${plan.lockfile}`, await readFile(join(root, plan.lockfile)));
  for (const file of ["package.json", ...INSTALL_SETTINGS]) {
    const path = join(root, file);
    if (existsSync(path)) part(`file:${file}`, await readFile(path));
  }
  part("command", plan.command);
  part("node", `${process.version} ${process.platform} ${process.arch}`);
  return key.digest("hex");
}

/** Installs the project's dependencies, through the cache when the install is reproducible. */
export async function installDependencies(options: InstallOptions): Promise<InstallOutcome> {
  const { root, log } = options;
  const plan = planInstall(root, options.installCommand);
  if (!plan) {
    log({ level: "info", message: "No package.json at the tarball root and no install_command: nothing to install" });
    return { cacheHit: false };
  }
  const cache = new InstallCache(options.cacheDir);
  const nodeModules = join(root, "node_modules");
  const key = await cacheKeyIfCacheable(plan, root, log);
  if (key && (await cache.restore(key, nodeModules))) {
    // The build's user may add to node_modules (tool caches), not rewrite the shared files.
    await options.sandbox?.handOver(nodeModules, true);
    log({ level: "info", message: `Install cache hit (${key.slice(0, 12)}): reusing node_modules, \`${plan.command}\` not run` });
    return { plan, cacheHit: true };
  }
  if (key) log({ level: "info", message: `Install cache miss (${key.slice(0, 12)})` });
  log({ level: "info", message: `Running ${plan.label}: ${plan.command}` });
  await runCommand({
    command: plan.command,
    label: plan.label,
    cwd: root,
    env: options.env,
    log,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
    spawnPlan: options.sandbox?.plan,
  });
  if (key) {
    // The cache only saves time: failing to fill it (a full disk) does not fail a build whose install worked.
    await publish(cache, key, root, log, options.sandbox).catch((error: unknown) =>
      log({ level: "error", message: `Could not cache the install: ${(error as Error).message}` }),
    );
  }
  return { plan, cacheHit: false };
}

async function cacheKeyIfCacheable(plan: InstallPlan, root: string, log: BuildLog): Promise<string | undefined> {
  if (!plan.lockfile) return undefined;
  const reason = await uncacheable(root);
  if (reason) {
    log({ level: "info", message: `The install cache is not used: ${reason}` });
    return undefined;
  }
  return installCacheKey(root, { ...plan, lockfile: plan.lockfile });
}

/** Scripts the package manager runs for the root package itself during an install. */
const ROOT_INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"];

/**
 * Why restoring node_modules alone would not reproduce this install, if it
 * would not. The cache replays one thing: the root node_modules.
 */
async function uncacheable(root: string): Promise<string | undefined> {
  // An install that started from an uploaded node_modules produced something else.
  if (existsSync(join(root, "node_modules"))) return "the tarball contains node_modules";
  if (existsSync(join(root, "pnpm-workspace.yaml"))) return "the project is a pnpm workspace";
  const manifest = join(root, "package.json");
  if (!existsSync(manifest)) return undefined;
  let pkg: { workspaces?: unknown; scripts?: Record<string, unknown> };
  try {
    pkg = JSON.parse(await readFile(manifest, "utf8")) as typeof pkg;
  } catch {
    return "package.json is not valid JSON";
  }
  // Workspaces get their own node_modules and lifecycle scripts; root
  // lifecycle scripts may write anywhere (generated code, a dist folder):
  // a cache hit would silently skip them.
  if (pkg.workspaces !== undefined) return "the project uses workspaces";
  const script = ROOT_INSTALL_SCRIPTS.find((name) => typeof pkg.scripts?.[name] === "string");
  if (script) return `package.json has a "${script}" script, which an install runs`;
  return undefined;
}

async function publish(cache: InstallCache, key: string, root: string, log: BuildLog, sandbox?: BuildSandbox): Promise<void> {
  const nodeModules = join(root, "node_modules");
  if (!existsSync(nodeModules)) {
    log({ level: "info", message: "The install made no node_modules at the tarball root: nothing to cache" });
    return;
  }
  // Only the root node_modules is cached; an install that also made others
  // (say an install_command `npm ci && cd app && npm ci`) would come back incomplete.
  const nested = await findNestedNodeModules(root);
  if (nested) {
    log({ level: "info", message: `Not caching the install: it also wrote ${nested}` });
    return;
  }
  const published = await cache.publish(key, nodeModules);
  if (published) await sandbox?.seal(cache.entry(key));
  log({
    level: "info",
    message: published ? `Cached the install as ${key.slice(0, 12)}` : "Another build cached the same install first",
  });
}

/** The first node_modules directory below the root (other than the root's own), if any. */
async function findNestedNodeModules(root: string, relative = ""): Promise<string | undefined> {
  const entries = await readdir(join(root, relative), { withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name === ".git") continue;
    const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
    if (entry.name === "node_modules") {
      if (relative !== "") return path;
      continue;
    }
    const found = await findNestedNodeModules(root, path);
    if (found) return found;
  }
  return undefined;
}
