import { type FSWatcher, lstatSync, readdirSync, watch } from "node:fs";
import { basename, join, relative, resolve, sep } from "node:path";

/** Changes closer together than this are one change (an editor's save, a git checkout). */
const QUIET_MS = 150;

/** Files whose change needs a new server: code, JSON (langgraph.json, package.json), styles, .env files. */
const RELOADS_ON = /\.(?:[cm]?[jt]sx?|json|css)$|^\.env(?:\..+)?$|\.env$/;

export interface ProjectWatcher {
  close(): void;
}

/**
 * Watches the files under `root` that need a reload, and calls `onChange`
 * with their paths (relative to `root`) once changes stop for a moment.
 * node_modules, dot-folders (.git, .berth) and `ignored` folders are not
 * watched. One watch per folder rather than fs.watch's `recursive`, which on
 * Linux walks and watches every folder below, node_modules included.
 */
export function watchProject(folder: string, ignored: string[], onChange: (paths: string[]) => void): ProjectWatcher {
  const root = resolve(folder);
  const skipped = new Set(ignored.map((path) => resolve(path)));
  const watchers = new Map<string, FSWatcher>();
  const changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;

  const note = (path: string) => {
    changed.add(relative(root, path));
    clearTimeout(timer);
    timer = setTimeout(() => {
      const paths = [...changed].sort();
      changed.clear();
      onChange(paths);
    }, QUIET_MS);
  };
  const skip = (dir: string) => basename(dir).startsWith(".") || basename(dir) === "node_modules" || skipped.has(dir);
  const isFolder = (path: string) => {
    try {
      return lstatSync(path).isDirectory();
    } catch {
      return false;
    }
  };
  const unwatch = (dir: string) => {
    for (const [path, watcher] of watchers) {
      if (path !== dir && !path.startsWith(dir + sep)) continue;
      watcher.close();
      watchers.delete(path);
    }
  };
  /** Watches `dir` and the folders below it; `announce`: its files are new (a folder created or moved in). */
  const add = (dir: string, announce: boolean) => {
    if (watchers.has(dir)) return;
    try {
      const watcher = watch(dir, (_event, name) => name && seen(join(dir, name.toString())));
      watcher.on("error", () => unwatch(dir));
      watchers.set(dir, watcher);
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (!skip(path)) add(path, announce);
        } else if (announce && RELOADS_ON.test(entry.name)) note(path);
      }
    } catch {
      // removed before it could be watched: its parent's watch tells of it
    }
  };
  const seen = (path: string) => {
    if (isFolder(path)) {
      if (!skip(path)) add(path, true);
    } else if (watchers.has(path)) {
      // A watched folder went away, and the sources in it.
      unwatch(path);
      note(path);
    } else if (RELOADS_ON.test(basename(path))) note(path);
  };

  add(root, false);
  return {
    close() {
      clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
