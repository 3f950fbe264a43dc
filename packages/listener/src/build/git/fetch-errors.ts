import { basename } from "node:path";
import type { GitCredentials } from "@berth/listener-protocol";

/** A fetch failed; the message is meant for the user (it becomes a revision's status message) and holds no credentials. */
export class GitFetchError extends Error {
  override readonly name = "GitFetchError";
}

/** What git failed at, in the words the messages use. */
export interface FailedOperation {
  /** The repository as shown to the user. */
  repository: string;
  /** E.g. "branch main" or "tag v1". */
  ref: string;
  credentialKind: GitCredentials["kind"] | undefined;
}

/** Quoted git output is cut at this length in error messages. */
const MAX_QUOTE = 300;

const AUTH_FAILURE =
  /Authentication failed|could not read (Username|Password)|terminal prompts disabled|returned error: 40[13]|HTTP Basic: Access denied|Invalid username or password|Permission denied \(|Permission denied, please try again/i;
const HOST_KEY_FAILURE = /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No \S+ host key is known/i;
const NOT_A_REPOSITORY =
  /does not appear to be a git repository|is this a git repository\?|Repository not found|repository '[^']*' not found|returned error: 404|not found: did you run git update-server-info/i;
const UNREACHABLE =
  /Could not resolve host|Could not resolve hostname|Failed to connect|Couldn't connect|Connection refused|Connection timed out|Connection reset|Connection closed|Operation timed out|Network is unreachable|No route to host|SSL certificate problem|server certificate verification failed|SSL_connect|gnutls_handshake|unable to access/i;

/**
 * Turns git's stderr (already scrubbed) into a precise, user-facing reason.
 * `fromRemote` is false only when the cause is unknown, i.e. it may as well
 * lie in the cache.
 */
export function explainFailure(stderr: string, operation: FailedOperation): { message: string; fromRemote: boolean } {
  const { repository, ref } = operation;
  const detail = quote(stderr);
  const busy = /Unable to create '([^']+\.lock)': File exists/.exec(stderr);
  if (busy) {
    // The cache's path is the listener's business; the lock's name is enough to tell what is held.
    return { message: `The repository cache is busy: another git process holds its ${basename(busy[1])}`, fromRemote: true };
  }
  if (/couldn't find remote ref/i.test(stderr)) {
    return { message: `The repository ${repository} has no ${ref}`, fromRemote: true };
  }
  if (/transport '[^']+' not allowed/i.test(stderr)) {
    return { message: `${repository} led git to a transport that is not allowed (${detail})`, fromRemote: true };
  }
  if (HOST_KEY_FAILURE.test(stderr)) {
    return {
      message: `SSH host key verification failed for ${repository}: the known hosts given with the key do not list the server's key`,
      fromRemote: true,
    };
  }
  if (AUTH_FAILURE.test(stderr)) {
    return {
      message: `Authentication failed for ${repository}: ${credentialHint(operation.credentialKind)} (${detail})`,
      fromRemote: true,
    };
  }
  if (NOT_A_REPOSITORY.test(stderr)) {
    return { message: `${repository} is not a git repository, or it does not exist (${detail})`, fromRemote: true };
  }
  if (UNREACHABLE.test(stderr)) return { message: `Could not reach ${repository}: ${detail}`, fromRemote: true };
  return { message: `git could not fetch ${ref} from ${repository}: ${detail}`, fromRemote: false };
}

function credentialHint(kind: FailedOperation["credentialKind"]): string {
  if (kind === "ssh") return "the server refused the SSH key; check that it may read the repository";
  if (kind === "token") return "the server refused the token; check that it is valid and may read the repository";
  return "the repository needs credentials";
}

/** What git appends to every failed remote operation, whatever the cause. */
const BOILERPLATE =
  /^(fatal: Could not read from remote repository|Please make sure you have the correct access rights|and the repository exists)/;

/** The most telling line of git's output: its last fatal/error line, else its last line; cut to a readable length. */
export function quote(stderr: string): string {
  const lines = stderr
    .split(/\r?\n|\r/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !BOILERPLATE.test(line))
    .reverse();
  const line = lines.find((candidate) => /^(fatal|error):/.test(candidate)) ?? lines[0] ?? "no output";
  return line.length > MAX_QUOTE ? `${line.slice(0, MAX_QUOTE)}…` : line;
}
