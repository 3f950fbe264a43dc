import { BadRequestError, ConflictError, NotFoundError } from "@berth/service-kit";
import { randomUUID } from "node:crypto";
import type { McpDiscoverInput, ProviderCreateInput, ProviderUpdateInput } from "../domain/inputs/auth-service.js";
import type { SecretBox } from "../domain/secret-box.js";
import { ManualRegistrationRequiredError, OAuthError, OAuthUrlError } from "../oauth/errors.js";
import { discoverMcpProvider } from "../oauth/mcp-discovery.js";
import { checkDestination, type OutboundOptions } from "../oauth/outbound.js";
import type { ProviderEndpoints } from "../oauth/provider-endpoints.js";
import type { OAuthProviderChange, OAuthProviderRecord } from "../storage/auth-types.js";
import type { ControlPlaneStorage } from "../storage/types.js";

/** The provider as answered: never its client secret. */
export function presentProvider(provider: OAuthProviderRecord) {
  const { tenant_id, client_secret_ciphertext: _secret, revocation_url, ...shown } = provider;
  return { ...shown, organization_id: tenant_id, revocation_url };
}

/** Where the provider sends the user back: the same for every flow of the provider, as providers require it registered. */
export const callbackUrlOf = (base: string, providerId: string) => `${base}/v2/auth/callback/${encodeURIComponent(providerId)}`;

/**
 * OAuth providers of a workspace: configured by hand, or discovered from an
 * MCP server with a client registered dynamically. Client secrets are stored
 * encrypted and never answered.
 */
export class AuthProviderService {
  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly box: SecretBox,
    /** How every request to a provider goes out (the operator's allowance of private addresses). */
    readonly outbound: OutboundOptions = {},
  ) {}

  async list(tenantId: string) {
    return (await this.storage.auth.listProviders(tenantId)).map(presentProvider);
  }

  async get(tenantId: string, providerId: string) {
    return presentProvider(await this.find(tenantId, providerId));
  }

  async create(tenantId: string, input: ProviderCreateInput) {
    if (input.token_endpoint_auth_method !== "none" && !input.client_secret) {
      throw new BadRequestError(`token_endpoint_auth_method ${input.token_endpoint_auth_method} needs a client_secret`);
    }
    await this.checkDestinations(input);
    const now = new Date().toISOString();
    const provider: OAuthProviderRecord = {
      id: randomUUID(),
      tenant_id: tenantId,
      provider_id: input.provider_id,
      name: input.name,
      client_id: input.client_id,
      client_secret_ciphertext: input.client_secret ? this.box.encrypt(input.client_secret) : null,
      auth_url: input.auth_url,
      token_url: input.token_url,
      revocation_url: input.revocation_url ?? null,
      uses_pkce: input.uses_pkce,
      code_challenge_method: input.uses_pkce ? (input.code_challenge_method ?? "S256") : input.code_challenge_method,
      provider_type: input.provider_type ?? null,
      mcp_server_url: null,
      token_endpoint_auth_method: input.token_endpoint_auth_method,
      is_dynamic_client: false,
      created_at: now,
      updated_at: now,
      shared_across_deployments: input.shared_across_deployments,
    };
    await this.storage.auth.createProvider(provider);
    return presentProvider(provider);
  }

  async update(tenantId: string, providerId: string, input: ProviderUpdateInput) {
    const current = await this.find(tenantId, providerId);
    const method = input.token_endpoint_auth_method ?? current.token_endpoint_auth_method;
    const hasSecret =
      input.client_secret !== undefined ? input.client_secret !== null : current.client_secret_ciphertext !== null;
    if (method !== "none" && !hasSecret) throw new BadRequestError(`token_endpoint_auth_method ${method} needs a client_secret`);
    await this.checkDestinations(input);
    // null leaves a field as it is (the hosted API's nullable fields), except the secret and the revocation endpoint, which it clears.
    const change: OAuthProviderChange = {
      name: input.name ?? undefined,
      client_id: input.client_id ?? undefined,
      client_secret_ciphertext:
        input.client_secret === undefined ? undefined : input.client_secret && this.box.encrypt(input.client_secret),
      auth_url: input.auth_url ?? undefined,
      token_url: input.token_url ?? undefined,
      revocation_url: input.revocation_url,
      uses_pkce: input.uses_pkce ?? undefined,
      code_challenge_method: input.code_challenge_method ?? undefined,
      token_endpoint_auth_method: input.token_endpoint_auth_method ?? undefined,
      shared_across_deployments: input.shared_across_deployments ?? undefined,
    };
    const updated = await this.storage.auth.updateProvider(tenantId, providerId, change, new Date().toISOString());
    if (!updated) throw new NotFoundError(`Provider ${providerId} not found`);
    return presentProvider(updated);
  }

  /** Deletes the provider with its users' tokens (not revoked at the provider: its client may be gone) and their connections. */
  async delete(tenantId: string, providerId: string): Promise<void> {
    if (!(await this.storage.auth.deleteProvider(tenantId, providerId)))
      throw new NotFoundError(`Provider ${providerId} not found`);
  }

  /** Reads an MCP server's OAuth metadata and registers a client there (400 when it cannot be registered dynamically). */
  async discoverMcp(tenantId: string, input: McpDiscoverInput, callbackBase: string) {
    // Before registering a client the provider could not be stored with.
    if (await this.storage.auth.getProvider(tenantId, input.provider_id)) {
      throw new ConflictError(`The workspace already has a provider ${input.provider_id}`);
    }
    let discovered: Awaited<ReturnType<typeof discoverMcpProvider>>;
    try {
      discovered = await discoverMcpProvider(
        input.mcp_server_url,
        {
          redirectUri: callbackUrlOf(callbackBase, input.provider_id),
          clientName: `Berth (${input.name})`,
        },
        this.outbound,
      );
    } catch (error) {
      if (error instanceof ManualRegistrationRequiredError || error instanceof OAuthError) {
        throw new BadRequestError(`MCP discovery of ${input.mcp_server_url} failed: ${error.message}`);
      }
      throw error;
    }
    const now = new Date().toISOString();
    const provider: OAuthProviderRecord = {
      id: randomUUID(),
      tenant_id: tenantId,
      provider_id: input.provider_id,
      name: input.name,
      client_id: discovered.client_id,
      client_secret_ciphertext: discovered.client_secret ? this.box.encrypt(discovered.client_secret) : null,
      auth_url: discovered.auth_url,
      token_url: discovered.token_url,
      revocation_url: discovered.revocation_url,
      uses_pkce: discovered.uses_pkce,
      code_challenge_method: discovered.code_challenge_method,
      provider_type: null,
      mcp_server_url: discovered.resource,
      token_endpoint_auth_method: discovered.token_endpoint_auth_method,
      is_dynamic_client: discovered.is_dynamic_client,
      created_at: now,
      updated_at: now,
      shared_across_deployments: input.shared_across_deployments,
    };
    await this.storage.auth.createProvider(provider);
    return presentProvider(provider);
  }

  /**
   * The endpoints the control plane itself calls (token, revocation) must lead
   * to public addresses unless the operator allows others: 400 naming the field.
   * (auth_url is only where users' browsers go.)
   */
  private async checkDestinations(input: { token_url?: string | null; revocation_url?: string | null }): Promise<void> {
    for (const field of ["token_url", "revocation_url"] as const) {
      const url = input[field] ? URL.parse(input[field]) : null;
      if (!url) continue;
      try {
        await checkDestination(url, field, this.outbound);
      } catch (error) {
        if (error instanceof OAuthUrlError) throw new BadRequestError(error.message);
        throw error;
      }
    }
  }

  async find(tenantId: string, providerId: string): Promise<OAuthProviderRecord> {
    const provider = await this.storage.auth.getProvider(tenantId, providerId);
    if (!provider) throw new NotFoundError(`Provider ${providerId} not found`);
    return provider;
  }

  /** The provider as the protocol needs it: its secret decrypted, an MCP server's URL as the resource indicator. */
  endpointsOf(provider: OAuthProviderRecord): ProviderEndpoints {
    return {
      client_id: provider.client_id,
      client_secret: provider.client_secret_ciphertext ? this.box.decrypt(provider.client_secret_ciphertext) : null,
      auth_url: provider.auth_url,
      token_url: provider.token_url,
      revocation_url: provider.revocation_url,
      uses_pkce: provider.uses_pkce,
      code_challenge_method: provider.code_challenge_method,
      token_endpoint_auth_method: provider.token_endpoint_auth_method,
      resource: provider.mcp_server_url,
    };
  }
}
