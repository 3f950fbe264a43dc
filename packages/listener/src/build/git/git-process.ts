import { spawn } from "node:child_process";
import { GitFetchError } from "./fetch-errors.js";
import { type GitSession, scrub } from "./git-environment.js";

/** After SIGTERM (on which git removes its own lock files), the process group gets this long before SIGKILL. */
const KILL_GRACE_MS = 3000;
/** Output kept from one git command: enough for its error messages, bounded against a chatty remote. */
const MAX_CAPTURE = 256 * 1024;

export interface GitResult {
  code: number | null;
  stdout: string;
  /** Already scrubbed of credentials. */
  stderr: string;
}

/**
 * Runs git (no shell) in its own process group, so an abort or the timeout
 * also kills what it started (git-remote-https, ssh, upload-pack). Resolves
 * with the exit code; rejects only when git could not start or was stopped.
 * Every stderr line goes to the session's log, scrubbed.
 */
export function runGit(args: string[], cwd: string, session: GitSession): Promise<GitResult> {
  const { signal } = session;
  if (signal.aborted) return Promise.reject(stopReason(signal));
  return new Promise<GitResult>((resolve, reject) => {
    const child = spawn("git", args, { cwd, env: session.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let pendingLine = "";
    let killTimer: NodeJS.Timeout | undefined;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      if (stdout.length < MAX_CAPTURE) stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-MAX_CAPTURE);
      const lines = (pendingLine + chunk).split(/\r?\n|\r/);
      pendingLine = lines.pop() ?? "";
      for (const line of lines) if (line.trim() !== "") session.log(line);
    });

    const killGroup = (signalName: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signalName);
      } catch {
        // The group is already gone.
      }
    };
    const onAbort = () => {
      killGroup("SIGTERM");
      killTimer = setTimeout(() => killGroup("SIGKILL"), KILL_GRACE_MS);
    };
    signal.addEventListener("abort", onAbort, { once: true });

    child.on("error", (error) => {
      // Only a failure to start ("close" still follows, but with nothing to report).
      if (child.pid === undefined) reject(new GitFetchError(`git could not be started on the listener: ${error.message}`));
    });
    child.on("close", (code) => {
      signal.removeEventListener("abort", onAbort);
      if (killTimer) clearTimeout(killTimer);
      if (child.pid === undefined) return;
      // Nothing git started may outlive it.
      killGroup("SIGKILL");
      if (pendingLine.trim() !== "") session.log(pendingLine);
      if (signal.aborted) return reject(stopReason(signal));
      resolve({ code, stdout, stderr: scrub(stderr, session.secrets) });
    });
  });
}

function stopReason(signal: AbortSignal): GitFetchError {
  return signal.reason instanceof GitFetchError ? signal.reason : new GitFetchError("The fetch was interrupted");
}
