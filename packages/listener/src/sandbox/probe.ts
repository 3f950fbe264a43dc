import { execFile } from "node:child_process";
import { bwrapArgs, type SandboxTools } from "./bwrap-args.js";
import { INSIDE, systemMounts } from "./host-view.js";
import { findProgram } from "./programs.js";

export type SandboxSupport = { available: true; tools: SandboxTools } | { available: false; reason: string };

/** The test switch that makes the probe report no sandbox (read with the listener's settings, settings.ts). */
export const FORCE_UNAVAILABLE = "BERTH_TEST_SANDBOX_UNAVAILABLE";

export interface ProbeOptions {
  /** For tests only: report that no sandbox can be had, so that the refusal path can be tested on a machine that has one. */
  forceUnavailable?: boolean;
  env?: NodeJS.ProcessEnv;
}

const PROBE_TIMEOUT_MS = 30_000;

/**
 * Whether this listener can sandbox builds and servers: it runs as root (to
 * run each deployment as a user of its own), bwrap and setpriv exist, and a
 * real sandbox of the same shape as a deployment's runs Node as `probeUid`.
 */
export async function probeSandbox(
  probeUid: number,
  { forceUnavailable = false, env = process.env }: ProbeOptions = {},
): Promise<SandboxSupport> {
  const unavailable = (reason: string): SandboxSupport => ({ available: false, reason });
  if (forceUnavailable) {
    return unavailable(`${FORCE_UNAVAILABLE} is set, a switch for tests`);
  }
  if (process.platform !== "linux") return unavailable("sandboxes need Linux");
  if (process.getuid?.() !== 0)
    return unavailable("the listener does not run as root, so it cannot run each deployment as a user of its own");
  const bwrap = findProgram("bwrap", env.PATH);
  if (!bwrap) return unavailable("bubblewrap (bwrap) is not installed");
  const setpriv = findProgram("setpriv", env.PATH);
  if (!setpriv) return unavailable("setpriv (util-linux) is not installed");
  const tools = { bwrap, setpriv };
  const user = { uid: probeUid, gid: probeUid };
  const check = `process.exit(process.getuid() === ${probeUid} && process.getgid() === ${probeUid} ? 0 : 3)`;
  const args = bwrapArgs(tools, user, [...systemMounts(env), { kind: "tmpfs", path: INSIDE.tmp }], INSIDE.tmp, [
    process.execPath,
    "-e",
    check,
  ]);
  const failure = await new Promise<string | undefined>((resolve) => {
    execFile(bwrap, args, { env: {}, cwd: "/", timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
      if (!error) return resolve(undefined);
      resolve(stderr.trim().split("\n")[0] || error.message);
    });
  });
  return failure === undefined ? { available: true, tools } : unavailable(`a test sandbox failed: ${failure}`);
}
