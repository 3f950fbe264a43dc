import { readFile } from "node:fs/promises";
import { DeployError } from "../compute/types.js";

/** The listener's secrets by name, each a map of keys to values (docs/containers.md, "Secrets of external images"). */
type SecretMap = Record<string, Record<string, string>>;

export interface RegistryCredentials {
  username: string;
  password: string;
  serveraddress: string;
}

/**
 * Secrets the listener's operator keeps outside the control plane, for
 * `secret_references` and `image_pull_secrets`: a JSON file
 * `{"<secret name>": {"<key>": "<value>"}}` read at each deploy, so that a
 * changed file needs no restart. Every missing secret or key fails the deploy, named.
 */
export class SecretSource {
  constructor(private readonly file: string | undefined) {}

  /** The environment variables of `references`, each `secret_name`'s `secret_key`. */
  async environment(
    references: { name: string; secret_name: string; secret_key: string }[] | null,
  ): Promise<Record<string, string>> {
    if (!references || references.length === 0) return {};
    const secrets = await this.read("secret_references");
    const missing = references.filter((ref) => typeof secrets[ref.secret_name]?.[ref.secret_key] !== "string");
    if (missing.length > 0) {
      const names = missing.map((ref) => `${ref.secret_name}/${ref.secret_key} (for ${ref.name})`).join(", ");
      throw new DeployError(`secret_references: the listener's secret source has no ${names}`);
    }
    return Object.fromEntries(references.map((ref) => [ref.name, secrets[ref.secret_name]![ref.secret_key]!]));
  }

  /** Registry credentials of the first of `pullSecrets` ({"name": ...}) whose registry is the image's. */
  async registryCredentials(pullSecrets: unknown, image: string): Promise<RegistryCredentials | undefined> {
    if (!Array.isArray(pullSecrets) || pullSecrets.length === 0) return undefined;
    const names = pullSecrets.map(nameOf).filter((name) => typeof name === "string");
    const secrets = await this.read("image_pull_secrets");
    const registry = image.includes("/") && /[.:]|^localhost$/.test(image.split("/")[0]!) ? image.split("/")[0]! : "docker.io";
    for (const name of names) {
      const secret = secrets[name];
      if (!secret) throw new DeployError(`image_pull_secrets: the listener's secret source has no ${name}`);
      if (typeof secret.username !== "string" || typeof secret.password !== "string")
        throw new DeployError(`image_pull_secrets: ${name} in the listener's secret source needs username and password`);
      if ((secret.registry ?? registry) === registry)
        return { username: secret.username, password: secret.password, serveraddress: registry };
    }
    return undefined;
  }

  /**
   * The `username` and `password` of secret `name`, for a purpose that may go
   * without (a registry that takes anonymous pushes): undefined when the
   * listener has no secret source or the source no such secret.
   */
  async optionalLogin(name: string, purpose: string): Promise<{ username: string; password: string } | undefined> {
    if (!this.file) return undefined;
    const secret = (await this.read(purpose))[name];
    if (!secret) return undefined;
    if (typeof secret.username !== "string" || typeof secret.password !== "string")
      throw new DeployError(`${purpose}: ${name} in the listener's secret source needs username and password`);
    return { username: secret.username, password: secret.password };
  }

  private async read(purpose: string): Promise<SecretMap> {
    if (!this.file)
      throw new DeployError(`${purpose}: this listener has no secret source (BERTH_LISTENER_SECRETS_FILE, docs/containers.md)`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(this.file, "utf8"));
    } catch (error) {
      throw new DeployError(`${purpose}: the listener's secret source cannot be read: ${(error as Error).message}`);
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
      throw new DeployError(`${purpose}: the listener's secret source must be a JSON object of secrets`);
    return parsed as SecretMap;
  }
}

/** An image_pull_secrets entry's name ({"name": ...}), if it has one. */
function nameOf(entry: unknown): unknown {
  return typeof entry === "object" && entry !== null && "name" in entry ? entry.name : undefined;
}
