import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "@berth/test-support";

const SSHD = "/usr/sbin/sshd";

/** Why an SSH host cannot run here, or false when it can. */
export function sshHostUnavailable(): string | false {
  if (!existsSync(SSHD)) return "OpenSSH's server (sshd, Debian's openssh-server) is not installed";
  try {
    execFileSync("ssh-keygen", ["-?"], { stdio: "ignore" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "ssh-keygen is not installed";
  }
  return false;
}

export interface SshHost {
  /** `ssh://<user>@127.0.0.1:<port>`: append a repository's absolute path. */
  url: string;
  /** A private key the server accepts, and the known_hosts line of its host key. */
  privateKey: string;
  knownHosts: string;
  /** A key the server does not accept. */
  strangerKey: string;
  close(): Promise<void>;
}

/**
 * A real OpenSSH server on loopback, with a host key and an accepted client
 * key of its own, logging in as the user running the tests: git over SSH
 * reaches any bare repository on this machine by its path.
 */
export async function startSshHost(): Promise<SshHost> {
  const dir = mkdtempSync(join(tmpdir(), "berth-ssh-host-"));
  const keygen = (name: string) => {
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", join(dir, name)]);
    return { privateKey: readFileSync(join(dir, name), "utf8"), publicKey: readFileSync(join(dir, `${name}.pub`), "utf8") };
  };
  const hostKey = keygen("host_key");
  const client = keygen("client_key");
  const stranger = keygen("stranger_key");
  writeFileSync(join(dir, "authorized_keys"), client.publicKey, { mode: 0o600 });
  // sshd's privilege separation needs this folder when it runs as root.
  if (process.getuid?.() === 0) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const port = await freePort();
  const child: ChildProcess = spawn(
    SSHD,
    [
      "-D",
      "-e",
      "-f",
      "/dev/null",
      "-p",
      String(port),
      "-o",
      "ListenAddress=127.0.0.1",
      "-o",
      `HostKey=${join(dir, "host_key")}`,
      "-o",
      `AuthorizedKeysFile=${join(dir, "authorized_keys")}`,
      "-o",
      "PasswordAuthentication=no",
      "-o",
      "KbdInteractiveAuthentication=no",
      "-o",
      "PermitRootLogin=prohibit-password",
      "-o",
      "StrictModes=no",
      "-o",
      "UsePAM=no",
      "-o",
      "PidFile=none",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString()));
  const deadline = Date.now() + 10_000;
  while (!(await answers(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`sshd did not start on 127.0.0.1:${port}: ${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const [type, key] = hostKey.publicKey.trim().split(/\s+/);
  return {
    url: `ssh://${userInfo().username}@127.0.0.1:${port}`,
    privateKey: client.privateKey,
    knownHosts: `[127.0.0.1]:${port} ${type} ${key}\n`,
    strangerKey: stranger.privateKey,
    close: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("data", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
