import { existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { MountOp } from "./bwrap-args.js";
import { CA_VARIABLES } from "../compute/server-command.js";

/** Where things are inside every sandbox. */
export const INSIDE = {
  /** The revision's built project (read-only for the server, writable for its build). */
  app: "/app",
  /** The deployment's database directory (servers only). */
  data: "/data",
  /** The deployment's private temporary directory, also HOME. */
  tmp: "/tmp",
  /** Berth's own install (a checkout's packages/ and node_modules/, or an installed node_modules/), read-only. */
  berth: "/opt/berth",
} as const;

/** This package's folder (src/sandbox or dist/sandbox → the package). */
const LISTENER_PACKAGE = fileURLToPath(new URL("../../", import.meta.url));

/**
 * What of Berth's install a sandbox sees at /opt/berth, and where the CLI is
 * there. Installed with npm, the packages are siblings under a node_modules/
 * (`node_modules/@berth/listener`) holding their dependencies too: that folder
 * is bound. In a checkout (`packages/listener`), the repository's packages/
 * and node_modules/ are.
 */
function berthInstall(): { binds: [source: string, target: string][]; bin: string } {
  const scope = dirname(LISTENER_PACKAGE);
  if (basename(scope) === "@berth" && basename(dirname(scope)) === "node_modules") {
    const nodeModules = join(INSIDE.berth, "node_modules");
    return { binds: [[dirname(scope), nodeModules]], bin: join(nodeModules, "@berth", "cli", "bin", "berth.mjs") };
  }
  const root = dirname(scope);
  return {
    binds: ["packages", "node_modules"].map((name): [string, string] => [join(root, name), join(INSIDE.berth, name)]),
    bin: join(INSIDE.berth, "packages", "cli", "bin", "berth.mjs"),
  };
}

const BERTH_INSTALL = berthInstall();

/** The berth CLI as a sandboxed process sees it. */
export const INSIDE_BERTH_BIN = BERTH_INSTALL.bin;

/** Top-level entries that merged-/usr systems make symlinks into /usr (and older ones keep as directories). */
const ROOT_LINKS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/**
 * What programs need from /etc, and nothing else: name resolution (npm
 * reaches its registry), TLS roots (not /etc/ssl/private), the dynamic
 * linker's cache, time zone, alternatives (tools symlinked through
 * /etc/alternatives). passwd and group are the sandbox's own (see etcFiles),
 * not the host's.
 */
const ETC = [
  "resolv.conf",
  "hosts",
  "host.conf",
  "nsswitch.conf",
  "gai.conf",
  "services",
  "protocols",
  "ssl/certs",
  "ssl/openssl.cnf",
  "ca-certificates",
  "ca-certificates.conf",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "timezone",
  "alternatives",
];

/**
 * The read-only part of every sandbox: /usr (with the root symlinks into it),
 * the essentials of /etc, Node's own install when it lives outside /usr, the
 * CA bundles the listener's environment names, and Berth's install at
 * /opt/berth. Not Berth's data: the checkout's .berth/ is not bound.
 */
export function systemMounts(env: NodeJS.ProcessEnv = process.env): MountOp[] {
  const ops: MountOp[] = [readOnly("/usr")];
  for (const name of ROOT_LINKS) {
    const path = `/${name}`;
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (stat?.isSymbolicLink()) ops.push({ kind: "symlink", linkTarget: readlinkSync(path), path });
    else if (stat?.isDirectory()) ops.push(readOnly(path));
  }
  for (const name of ETC) ops.push({ ...readOnly(`/etc/${name}`), optional: true });
  const nodePrefix = dirname(dirname(realpathSync(process.execPath)));
  if (nodePrefix !== "/usr" && !nodePrefix.startsWith("/usr/")) ops.push(readOnly(nodePrefix));
  for (const name of CA_VARIABLES) {
    const path = env[name];
    const covered = path !== undefined && ["/usr/", "/etc/ssl/certs/"].some((dir) => `${path}/`.startsWith(dir));
    if (path?.startsWith("/") && !covered && existsSync(path)) ops.push({ ...readOnly(path), optional: true });
  }
  for (const [source, target] of BERTH_INSTALL.binds) ops.push(readOnly(source, target));
  return ops;
}

function readOnly(source: string, target = source): Extract<MountOp, { kind: "bind" }> {
  return { kind: "bind", source, target, writable: false };
}

/** PATH inside a sandbox: the running Node's directory first (node, npm, npx, corepack match the Node serving the project). */
export function insidePath(): string {
  const nodeDir = dirname(process.execPath);
  return [nodeDir, "/usr/local/bin", "/usr/bin", "/bin"].filter((dir, index, all) => all.indexOf(dir) === index).join(":");
}

/** The sandbox's /etc/passwd and /etc/group: root, nobody and the sandbox's user, whose home is /tmp. */
export function etcFiles(uid: number, gid: number): { passwd: string; group: string } {
  return {
    passwd: `root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\nberth:x:${uid}:${gid}:Berth deployment:${INSIDE.tmp}:/usr/sbin/nologin\n`,
    group: `root:x:0:\nnogroup:x:65534:\nberth:x:${gid}:\n`,
  };
}
