import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { GitCredentials } from "@berth/listener-protocol";
import { GitFetchError } from "./fetch-errors.js";
import type { Source } from "./urls-and-refs.js";

// The environment one call runs git in: a private HOME, no inherited config, only the allowed protocols, the
// credentials as config or key files (never argv), secrets scrubbed from what git prints, and the fetch timeout.

/** A fetch or ls-remote (with the archive that follows) that takes longer is killed. */
export const FETCH_TIMEOUT_MS = 600_000;

/** One call's git environment and the temporary directory (HOME, SSH key files) it lives in. */
export interface GitSession {
  home: string;
  env: Record<string, string>;
  /** Strings scrubbed from everything git prints before it reaches a log or an error. */
  secrets: string[];
  credentialKind: GitCredentials["kind"] | undefined;
  signal: AbortSignal;
  log: (line: string) => void;
}

/** What of a fetch or ls-remote request shapes its session. */
export interface SessionRequest {
  credentials?: GitCredentials;
  allowLocal?: boolean;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

/**
 * Runs `body` with a fresh, private HOME and git environment, under the fetch
 * timeout and the caller's signal; removes the directory (and any key files)
 * afterwards, whatever happens.
 */
export async function withSession<T>(
  request: SessionRequest,
  source: Source,
  what: string,
  body: (session: GitSession) => Promise<T>,
): Promise<T> {
  const deadline = startDeadline(request.signal, what);
  const home = await mkdtemp(join(tmpdir(), "berth-git-"));
  try {
    const secrets: string[] = [];
    const env = baseEnv(home, request.allowLocal === true && source.transport === "local");
    const { credentials } = request;
    if (credentials?.kind === "token") addTokenHeader(env, credentials, secrets);
    if (credentials?.kind === "ssh") await addSshKey(env, home, credentials, secrets);
    const log = request.log ?? (() => {});
    return await body({
      home,
      env,
      secrets,
      credentialKind: credentials?.kind,
      signal: deadline.signal,
      log: (line) => log(scrub(line, secrets)),
    });
  } finally {
    deadline.dispose();
    await rm(home, { recursive: true, force: true });
  }
}

/** Nothing of the parent's environment (it holds the control plane's secrets) nor of any user or system git config. */
function baseEnv(home: string, allowFile: boolean): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    LANG: "C",
    // Error messages are matched in English.
    LC_ALL: "C",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    // git looks for a repository from its cwd upwards; an ls-remote in HOME must not find one around the temp dir.
    GIT_CEILING_DIRECTORIES: dirname(home),
  };
  setConfig(env, "protocol.allow", "never");
  for (const protocol of ["https", "http", "ssh", "git"]) setConfig(env, `protocol.${protocol}.allow`, "always");
  // file covers local paths too; ext (which runs commands) stays refused.
  if (allowFile) setConfig(env, "protocol.file.allow", "always");
  setConfig(env, "core.hooksPath", "/dev/null");
  setConfig(env, "credential.helper", "");
  // A detached auto-gc would outlive the call and hold the cache's locks; in the foreground it is serialized and killable.
  setConfig(env, "gc.autoDetach", "false");
  setConfig(env, "maintenance.autoDetach", "false");
  return env;
}

/** Adds one `-c key=value` through the environment (GIT_CONFIG_COUNT), where `ps` and logs do not see it. */
function setConfig(env: Record<string, string>, key: string, value: string): void {
  const index = Number(env.GIT_CONFIG_COUNT ?? "0");
  env[`GIT_CONFIG_KEY_${index}`] = key;
  env[`GIT_CONFIG_VALUE_${index}`] = value;
  env.GIT_CONFIG_COUNT = String(index + 1);
}

function addTokenHeader(
  env: Record<string, string>,
  credentials: Extract<GitCredentials, { kind: "token" }>,
  secrets: string[],
): void {
  const pair = `${credentials.username ?? "x-access-token"}:${credentials.token}`;
  const encoded = Buffer.from(pair).toString("base64");
  secrets.push(credentials.token, pair, encoded);
  setConfig(env, "http.extraHeader", `Authorization: Basic ${encoded}`);
}

async function addSshKey(
  env: Record<string, string>,
  home: string,
  credentials: Extract<GitCredentials, { kind: "ssh" }>,
  secrets: string[],
): Promise<void> {
  secrets.push(credentials.privateKey.trim());
  const keyFile = join(home, "id");
  const knownHostsFile = join(home, "known_hosts");
  // ssh refuses a key file without its final newline, and a key others can read.
  await writeFile(keyFile, withNewline(credentials.privateKey), { mode: 0o600 });
  await writeFile(knownHostsFile, withNewline(credentials.knownHosts), { mode: 0o600 });
  // -F /dev/null: the listener's ~/.ssh/config (read from the passwd entry, not $HOME) must not apply.
  env.GIT_SSH_COMMAND = [
    "ssh -F /dev/null",
    `-i ${shellQuote(keyFile)}`,
    "-o IdentitiesOnly=yes -o IdentityAgent=none",
    `-o UserKnownHostsFile=${shellQuote(knownHostsFile)} -o GlobalKnownHostsFile=/dev/null`,
    "-o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=30",
  ].join(" ");
  env.GIT_SSH_VARIANT = "ssh";
}

function withNewline(text: string): string {
  return text.endsWith("\n") ? text : `${text}\n`;
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** Removes every secret, and any Authorization header whatever its value, from git's output. */
export function scrub(text: string, secrets: readonly string[]): string {
  let clean = text;
  for (const secret of secrets) if (secret !== "") clean = clean.split(secret).join("***");
  return clean.replace(/(authorization:\s*)[^\r\n]*/gi, "$1***");
}

function startDeadline(signal: AbortSignal | undefined, what: string): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const minutes = FETCH_TIMEOUT_MS / 60_000;
  const timer = setTimeout(
    () => controller.abort(new GitFetchError(`${what} timed out after ${minutes} minute${minutes === 1 ? "" : "s"}`)),
    FETCH_TIMEOUT_MS,
  );
  const onAbort = () => controller.abort(new GitFetchError(`${what} was interrupted`));
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    },
  };
}
