/** One step of building the sandbox's file system, in bubblewrap's order. */
export type MountOp =
  | { kind: "bind"; source: string; target: string; writable: boolean; optional?: boolean }
  | { kind: "symlink"; linkTarget: string; path: string }
  | { kind: "tmpfs"; path: string };

export interface SandboxUser {
  uid: number;
  gid: number;
}

export interface SandboxTools {
  bwrap: string;
  setpriv: string;
}

/**
 * Capabilities bwrap keeps until setpriv has switched to the sandbox's user:
 * setuid/setgid to switch, setpcap to empty the bounding set, dac_override to
 * enter a working directory only that user may open. Switching from root to
 * another uid clears them all (setpriv also empties the inheritable and
 * bounding sets and sets no_new_privs, so no setuid binary gives them back).
 */
const SWITCH_CAPS = ["CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_DAC_OVERRIDE"];

/**
 * The bubblewrap command line that runs `argv` as `user` in `cwd` (a path in
 * the sandbox) over the file system `mounts` builds on an empty root.
 *
 * bwrap runs as root (not as the sandbox's user): it must bind directories
 * whose parents only root may enter (the data directory is 0700), which an
 * unprivileged bwrap cannot. Namespaces: pid (the sandbox sees its own
 * processes only, and the whole tree dies with its pid 1), ipc, uts, cgroup,
 * mount; the network is shared on purpose (the router reaches the server on
 * loopback, builds reach package registries). The environment is the one
 * bwrap is spawned with (see SpawnPlan), never put on this command line,
 * which any local user can read in /proc.
 */
export function bwrapArgs(
  tools: SandboxTools,
  user: SandboxUser,
  mounts: readonly MountOp[],
  cwd: string,
  argv: readonly string[],
): string[] {
  return [
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--hostname",
    "berth-sandbox",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    ...SWITCH_CAPS.flatMap((cap) => ["--cap-add", cap]),
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    ...withParents(mounts),
    "--chdir",
    cwd,
    "--",
    tools.setpriv,
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    "--clear-groups",
    "--inh-caps=-all",
    "--bounding-set=-all",
    "--no-new-privs",
    "--",
    ...argv,
  ];
}

/**
 * The mounts, each preceded by the directories above it that nothing created
 * yet: made 0755 explicitly, since bwrap running as root makes the parents
 * of its mount points 0700, closed to the sandbox's user.
 */
function withParents(mounts: readonly MountOp[]): string[] {
  const made = new Set<string>(["/", "/proc", "/dev"]);
  const args: string[] = [];
  for (const op of mounts) {
    const target = op.kind === "bind" ? op.target : op.path;
    const parts = target.split("/").filter(Boolean);
    for (let depth = 1; depth < parts.length; depth += 1) {
      const parent = `/${parts.slice(0, depth).join("/")}`;
      if (made.has(parent)) continue;
      made.add(parent);
      args.push("--perms", "0755", "--dir", parent);
    }
    made.add(target);
    args.push(...mountArgs(op));
  }
  return args;
}

function mountArgs(op: MountOp): string[] {
  switch (op.kind) {
    case "bind": {
      const flag = op.writable ? "--bind" : "--ro-bind";
      return [op.optional ? `${flag}-try` : flag, op.source, op.target];
    }
    case "symlink":
      return ["--symlink", op.linkTarget, op.path];
    case "tmpfs":
      return ["--tmpfs", op.path];
  }
}
