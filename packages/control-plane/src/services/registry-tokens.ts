import { rm } from "node:fs/promises";
import { join } from "node:path";
import { BadRequestError, NotFoundError, UnauthorizedError } from "@berth/service-kit";
import { randomUUID } from "node:crypto";
import { type JWTPayload, jwtVerify, SignJWT } from "jose";
import type { RegistryKeys } from "./registry-signing-keys.js";
import type { ControlPlaneStorage } from "../storage/types.js";

export interface RegistrySettings {
  /** host:port clients push to and listeners pull from. */
  address: string;
  keys: RegistryKeys;
  /** The registry's `auth.token.service` and `issuer`. */
  service: string;
  issuer: string;
  pushTokenTtlSeconds: number;
  /** The registry's storage root (its filesystem driver's rootdirectory), where deleted deployments' repositories are removed. */
  storageDir: string;
}

/** A registry credential: the username is ignored, the password is one of these tokens. */
export interface RegistryCredential {
  username: string;
  password: string;
  serveraddress: string;
}

const REGISTRY_TOKEN_TTL_SECONDS = 300;
/** Pulls outlive pushes: a listener may restart a container long after the push. */
const PULL_TOKEN_TTL_SECONDS = 3600;

/** A deployment's repositories: `d-<deployment id>` and everything under it. */
export function repositoryPrefixOf(deploymentId: string): string {
  return `d-${deploymentId}`;
}

/**
 * Credentials for the platform's image registry (Docker's token
 * authentication): push tokens for users, pull tokens for listeners, each
 * scoped to one deployment's repositories; the registry's token endpoint trades
 * them for the registry's own short tokens, granting only what the scope allows.
 */
export class RegistryTokenService {
  private readonly pullTokens = new Map<string, { token: string; renewAt: number }>();

  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly settings: RegistrySettings | undefined,
  ) {}

  /** `POST /v2/deployments/{id}/push-token`: a short-lived push credential for an internal_image deployment. */
  async pushToken(tenantId: string, deploymentId: string): Promise<{ token: string; registry_url: string }> {
    const deployment = await this.storage.deployments.get(tenantId, deploymentId);
    if (!deployment) throw new NotFoundError(`Deployment ${deploymentId} not found`);
    const { source } = deployment;
    // The hosted platform's wording: the official CLI recognises it.
    if (source !== "internal_image") {
      throw new BadRequestError(
        `push-token is only available for 'internal_docker' source deployments (internal_image in the spec's names), not ${source}`,
      );
    }
    const settings = this.configured();
    const token = await this.sign({ deployment_id: deploymentId, use: "push" }, settings.pushTokenTtlSeconds);
    return { token, registry_url: `${settings.address}/${repositoryPrefixOf(deploymentId)}` };
  }

  /**
   * A deleted deployment's repositories go with it: their tags and manifests
   * are removed from the registry's storage (layers other repositories share
   * stay; space is reclaimed by the registry's garbage-collect).
   */
  async removeRepositories(deploymentId: string): Promise<void> {
    if (!this.settings) return;
    const repositories = join(this.settings.storageDir, "docker", "registry", "v2", "repositories");
    await rm(join(repositories, repositoryPrefixOf(deploymentId)), { recursive: true, force: true });
    this.pullTokens.delete(deploymentId);
  }

  /** What a listener pulls a deployment's image with (undefined without a registry). */
  async pullCredential(deploymentId: string): Promise<RegistryCredential | undefined> {
    if (!this.settings) return undefined;
    // Listeners read their assignments every second: a token is signed again only once half its life is gone.
    const now = Date.now();
    const cached = this.pullTokens.get(deploymentId);
    let password = cached && cached.renewAt > now ? cached.token : undefined;
    if (!password) {
      password = await this.sign({ deployment_id: deploymentId, use: "pull" }, PULL_TOKEN_TTL_SECONDS);
      this.pullTokens.set(deploymentId, { token: password, renewAt: now + (PULL_TOKEN_TTL_SECONDS * 1000) / 2 });
    }
    return { username: "berth", password, serveraddress: this.settings.address };
  }

  /**
   * The registry's token endpoint: Basic credentials whose password is a push
   * or pull token, and the scopes the registry asks for. Grants only actions on
   * the token's deployment's repositories (pull tokens: pull only), as a token
   * the registry verifies with the configured certificate.
   */
  async exchange(
    authorization: string | undefined,
    scopes: string[],
  ): Promise<{ token: string; access_token: string; expires_in: number; issued_at: string }> {
    const settings = this.configured();
    const password = basicPassword(authorization);
    if (!password)
      throw new UnauthorizedError("The registry needs a push token (POST /v2/deployments/{id}/push-token) as password");
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(password, settings.keys.publicKey, {
        issuer: settings.issuer,
        audience: `${settings.service}:credential`,
      }));
    } catch {
      throw new UnauthorizedError("The registry token is invalid or expired: ask for a new push token");
    }
    const deploymentId = String(claims.deployment_id);
    if (!(await this.storage.deployments.getAny(deploymentId))) throw new UnauthorizedError("The token's deployment is gone");
    const prefix = repositoryPrefixOf(deploymentId);
    const allowed = claims.use === "push" ? ["pull", "push"] : ["pull"];
    const access = scopes.flatMap((scope) => {
      const [type, name, actions] = scope.split(":");
      if (type !== "repository" || !name || !(name === prefix || name.startsWith(`${prefix}/`))) return [];
      return [{ type, name, actions: (actions ?? "").split(",").filter((action) => allowed.includes(action)) }];
    });
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ access })
      .setProtectedHeader({ alg: "ES256", typ: "JWT", kid: settings.keys.keyId })
      .setIssuer(settings.issuer)
      .setSubject(deploymentId)
      .setAudience(settings.service)
      .setIssuedAt(now)
      .setNotBefore(now - 10)
      .setExpirationTime(now + REGISTRY_TOKEN_TTL_SECONDS)
      .setJti(randomUUID())
      .sign(settings.keys.privateKey);
    return { token, access_token: token, expires_in: REGISTRY_TOKEN_TTL_SECONDS, issued_at: new Date(now * 1000).toISOString() };
  }

  private configured(): RegistrySettings {
    if (!this.settings) {
      throw new BadRequestError(
        "Push tokens need an image registry, which this control plane is not configured with (BERTH_REGISTRY_PORT, docs/containers.md): " +
          "deploy the source instead (`langgraphjs deploy --remote`); the control plane's listener builds it.",
      );
    }
    return this.settings;
  }

  private sign(claims: Record<string, string>, ttlSeconds: number): Promise<string> {
    const settings = this.configured();
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer(settings.issuer)
      .setAudience(`${settings.service}:credential`)
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .sign(settings.keys.privateKey);
  }
}

function basicPassword(authorization: string | undefined): string | undefined {
  const match = /^Basic\s+(.+)$/i.exec(authorization ?? "");
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon >= 0 ? decoded.slice(colon + 1) : undefined;
}
