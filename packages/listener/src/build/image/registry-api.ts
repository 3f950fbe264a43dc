/*
 * The parts of a registry's HTTP API (the OCI distribution API, `/v2/…`) a
 * listener needs beside the engine, which pushes but neither lists nor
 * deletes: whether a tag exists, a repository's tags, deleting a manifest.
 */

/** A registry login: sent as Basic credentials, or traded for a bearer token where the registry asks for one. */
export interface RegistryLogin {
  username: string;
  password: string;
}

/** A pushed image as the registry has it. */
export interface RegistryManifest {
  /** The manifest's digest (what a delete names). */
  digest: string;
  /** The image's config digest: the engine's image id (`sha256:…`). */
  configDigest?: string;
}

const MANIFEST_TYPES = [
  "application/vnd.docker.distribution.manifest.v2+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.oci.image.index.v1+json",
].join(", ");

const TIMEOUT_MS = 30_000;

/** Loopback registries speak plain HTTP (as the engines assume); any other HTTPS. */
export function registryBaseUrl(host: string): string {
  const name = host.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  const loopback = name === "localhost" || name === "::1" || /^127\.\d+\.\d+\.\d+$/.test(name);
  return `${loopback ? "http" : "https"}://${host}`;
}

export class RegistryApi {
  /** Bearer tokens by scope, for registries with token authentication. */
  private readonly tokens = new Map<string, string>();

  constructor(
    private readonly host: string,
    private readonly login: RegistryLogin | undefined,
  ) {}

  /** The manifest `reference` (a tag or digest) of `repository`, or undefined when the registry has none. */
  async manifest(repository: string, reference: string): Promise<RegistryManifest | undefined> {
    const response = await this.call("GET", `/v2/${repository}/manifests/${reference}`, `repository:${repository}:pull`, {
      Accept: MANIFEST_TYPES,
    });
    if (response.status === 404) return undefined;
    await expectOk(response, `reading ${repository}:${reference}`);
    const digest = response.headers.get("docker-content-digest");
    const body = (await response.json()) as { config?: { digest?: unknown } };
    if (!digest) throw new Error(`The registry answered ${repository}:${reference} without its digest`);
    return { digest, configDigest: typeof body.config?.digest === "string" ? body.config.digest : undefined };
  }

  /** The repository's tags (none when the repository does not exist). */
  async tags(repository: string): Promise<string[]> {
    const tags: string[] = [];
    let path: string | undefined = `/v2/${repository}/tags/list?n=1000`;
    while (path) {
      const response = await this.call("GET", path, `repository:${repository}:pull`);
      if (response.status === 404) return tags;
      await expectOk(response, `listing the tags of ${repository}`);
      tags.push(...(((await response.json()) as { tags?: string[] | null }).tags ?? []));
      // Pagination: the next page is in a Link header (`</v2/…?last=…>; rel="next"`).
      path = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("link") ?? "")?.[1];
    }
    return tags;
  }

  /** Deletes a manifest (and every tag on it): false when the registry does not allow deletes. */
  async deleteManifest(repository: string, digest: string): Promise<boolean> {
    const response = await this.call("DELETE", `/v2/${repository}/manifests/${digest}`, `repository:${repository}:delete`);
    if (response.status === 405) return false;
    if (response.status === 404) return true;
    await expectOk(response, `deleting ${repository}@${digest}`);
    return true;
  }

  /** A request, answering the registry's challenge once: Basic with the login, or a bearer token from its realm. */
  private async call(method: string, path: string, scope: string, headers: Record<string, string> = {}): Promise<Response> {
    const url = `${registryBaseUrl(this.host)}${path}`;
    const send = (authorization?: string) =>
      fetch(url, {
        method,
        headers: { ...headers, ...(authorization ? { Authorization: authorization } : {}) },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    const known = this.tokens.get(scope);
    const first = await send(known && `Bearer ${known}`);
    if (first.status !== 401) return first;
    const challenge = first.headers.get("www-authenticate") ?? "";
    await first.body?.cancel();
    if (/^basic/i.test(challenge)) return this.login ? send(this.basic()) : first;
    if (!/^bearer/i.test(challenge)) return first;
    const token = await this.token(challenge, scope);
    this.tokens.set(scope, token);
    return send(`Bearer ${token}`);
  }

  /** A token from the challenge's realm, for the scope it names (else ours), asked with the login when there is one. */
  private async token(challenge: string, scope: string): Promise<string> {
    const params = Object.fromEntries([...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1]!, match[2]!]));
    if (!params.realm) throw new Error(`The registry's challenge names no token realm: ${challenge}`);
    const realm = new URL(params.realm);
    if (params.service) realm.searchParams.set("service", params.service);
    realm.searchParams.set("scope", params.scope ?? scope);
    const response = await fetch(realm, {
      headers: this.login ? { Authorization: this.basic() } : {},
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await expectOk(response, "asking the registry's token service for a token");
    const body = (await response.json()) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token) throw new Error("The registry's token service answered no token");
    return token;
  }

  private basic(): string {
    return `Basic ${Buffer.from(`${this.login!.username}:${this.login!.password}`).toString("base64")}`;
  }
}

async function expectOk(response: Response, what: string): Promise<void> {
  if (response.ok) return;
  const text = (await response.text().catch(() => "")).slice(0, 300).trim();
  throw new Error(`The registry refused ${what}: HTTP ${response.status}${text ? ` ${text}` : ""}`);
}
