import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { GitCredentials } from "@berth/listener-protocol";
import { GitFetchError } from "./fetch-errors.js";

// What the user gave (URL, ref, credentials), checked and classified before git ever sees it: what is refused, and why.

type Transport = "http" | "ssh" | "git" | "local";

/** A repository URL, checked and classified. */
export interface Source {
  /** As handed to git. */
  url: string;
  /** As shown to the user. */
  display: string;
  transport: Transport;
  /** Names the cache repository: the same repository spelled slightly differently shares one. */
  cacheKey: string;
}

export interface RefTarget {
  kind: "branch" | "tag";
  name: string;
  /** The full ref on the remote, e.g. refs/heads/main. */
  remote: string;
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
/** git's `<transport>::<address>` syntax runs a remote helper (ext:: runs any command): never accepted. */
const REMOTE_HELPER = /^[A-Za-z0-9][A-Za-z0-9+.-]*::/;
/** scp-like SSH, `[user@]host:path`; git reads it so only when no slash comes before the colon. */
const SCP_LIKE = /^(?:[^@/\s]+@)?([^/:\s]+):(?!\/\/)/;
const SCHEME_TRANSPORTS: Record<string, Transport> = { https: "http", http: "http", ssh: "ssh", git: "git" };
const ACCEPTED = "https://, http://, ssh://, git:// or user@host:path";

export function parseSource(raw: string, allowLocal: boolean): Source {
  const url = raw.trim();
  if (url === "") throw new GitFetchError("The repository URL is empty");
  // A URL starting with "-" would reach git as an option.
  if (url.startsWith("-") || hasControlCharacter(url)) throw new GitFetchError(`"${url}" is not a repository URL`);
  if (REMOTE_HELPER.test(url)) {
    throw new GitFetchError(`The repository URL "${url}" uses a git remote helper ("::"); use ${ACCEPTED}`);
  }
  const scheme = SCHEME.exec(url)?.[1].toLowerCase();
  if (scheme === "file") return localSource(fileUrlPath(url), url, allowLocal);
  if (scheme !== undefined) return schemeSource(url, scheme);
  if (url.startsWith("/")) return localSource(url, url, allowLocal);
  const scp = SCP_LIKE.exec(url);
  if (scp) {
    const key = `${url.slice(0, scp.index + scp[0].length).toLowerCase()}${trimRepoPath(url.slice(scp[0].length))}`;
    return { url, display: url, transport: "ssh", cacheKey: `scp:${key}` };
  }
  throw new GitFetchError(`"${url}" is not a repository URL: use ${ACCEPTED}${allowLocal ? " or an absolute path" : ""}`);
}

function schemeSource(url: string, scheme: string): Source {
  const transport = SCHEME_TRANSPORTS[scheme];
  if (transport === undefined)
    throw new GitFetchError(`The repository URL "${url}" has the unsupported scheme ${scheme}://; use ${ACCEPTED}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new GitFetchError(`"${url}" is not a valid URL`);
  }
  if (parsed.hostname === "") throw new GitFetchError(`The repository URL "${url}" has no host`);
  // A password in the URL would travel on git's argv and into logs; the integration's token is the place for it.
  if (parsed.password !== "") {
    throw new GitFetchError("The repository URL contains a password; give it as the integration's token instead");
  }
  const port = parsed.port === "" ? "" : `:${parsed.port}`;
  const cacheKey = `${scheme}://${parsed.hostname.toLowerCase()}${port}${trimRepoPath(parsed.pathname)}${parsed.search}`;
  return { url, display: url, transport, cacheKey };
}

function localSource(path: string, url: string, allowLocal: boolean): Source {
  if (!allowLocal) throw new GitFetchError(`Fetching from a local path is not allowed (${url}); use ${ACCEPTED}`);
  const absolute = resolve(path);
  return { url: absolute, display: absolute, transport: "local", cacheKey: `file://${absolute}` };
}

function fileUrlPath(url: string): string {
  try {
    return fileURLToPath(url);
  } catch {
    throw new GitFetchError(`"${url}" is not a file:// URL of this machine`);
  }
}

/** "/acme/agent.git/" and "/acme/agent" name the same repository on every common host. */
function trimRepoPath(path: string): string {
  return path.replace(/\/+$/, "").replace(/\.git$/, "");
}

export function parseRef(raw: string): RefTarget {
  const ref = raw.trim();
  let kind: RefTarget["kind"] = "branch";
  let name = ref;
  if (ref.startsWith("refs/tags/")) {
    kind = "tag";
    name = ref.slice("refs/tags/".length);
  } else if (ref.startsWith("refs/heads/")) {
    name = ref.slice("refs/heads/".length);
  } else if (ref.startsWith("refs/")) {
    throw new GitFetchError(
      `The ref "${ref}" is neither a branch nor a tag: use a branch name, refs/heads/<name> or refs/tags/<name>`,
    );
  }
  if (!isValidRefName(name)) throw new GitFetchError(`"${raw}" is not a valid ${kind} name`);
  return { kind, name, remote: `refs/${kind === "tag" ? "tags" : "heads"}/${name}` };
}

/** git's own rules for ref names (git check-ref-format), plus no leading "-" so a name can never read as an option. */
function isValidRefName(name: string): boolean {
  if (name === "" || name === "@" || name.startsWith("-") || name.startsWith("/") || name.endsWith("/")) return false;
  if (name.endsWith(".") || name.includes("//") || name.includes("..") || name.includes("@{")) return false;
  if (hasControlCharacter(name) || /[ ~^:?*[\\]/.test(name)) return false;
  return name.split("/").every((part) => !part.startsWith(".") && !part.endsWith(".lock"));
}

/** Control characters have no place in a URL, a ref name or a header value (a line break would end the header). */
function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

export function describeRef(target: RefTarget): string {
  return `${target.kind} ${target.name}`;
}

/** Credentials that cannot apply to the URL are refused rather than silently ignored: it is a misconfiguration. */
export function checkCredentials(source: Source, credentials: GitCredentials | undefined): void {
  if (source.transport === "ssh" && credentials?.kind !== "ssh") {
    // Without a key of its own, ssh would fall back to the listener's identity.
    throw new GitFetchError(`${source.display} is an SSH URL: it needs an SSH private key and known hosts`);
  }
  if (credentials === undefined) return;
  const fits = (source.transport === "http" && credentials.kind === "token") || source.transport === "ssh";
  if (!fits) {
    const given = credentials.kind === "token" ? "A token" : "An SSH key";
    throw new GitFetchError(
      `${given} cannot be used with ${source.display}; use an ${credentials.kind === "token" ? "https" : "SSH"} URL`,
    );
  }
  if (credentials.kind === "token") {
    if (credentials.token === "" || hasControlCharacter(credentials.token))
      throw new GitFetchError("The token is empty or contains a control character");
    if (credentials.username !== undefined && (credentials.username.includes(":") || hasControlCharacter(credentials.username))) {
      throw new GitFetchError("The token's username may not contain a colon or a control character");
    }
  }
}
