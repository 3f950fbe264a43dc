import { relative } from "node:path";
import type { Readable } from "node:stream";
import { pack } from "tar-fs";

/**
 * A build context for the engine: `entries` of `root` (symbolic links kept as
 * links, never followed) plus a generated `Dockerfile` at its root, which
 * replaces any the tree has. `ignore` takes paths relative to `root`.
 */
export function packWithDockerfile(
  root: string,
  entries: string[] | undefined,
  dockerfile: string,
  ignore: (path: string) => boolean = () => false,
): Readable {
  return pack(root, {
    entries,
    dereference: false,
    ignore: (path) => {
      const name = relative(root, path);
      return name === "Dockerfile" || ignore(name);
    },
    finalize: false,
    finish(archive) {
      archive.entry({ name: "Dockerfile", mode: 0o644 }, dockerfile);
      archive.finalize();
    },
  });
}
