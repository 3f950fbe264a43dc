import { ForbiddenError, NotFoundError } from "@berth/service-kit";
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { TokenMetadataInput } from "../domain/inputs/auth-service.js";
import type { SecretBox } from "../domain/secret-box.js";
import { OAuthProviderError } from "../oauth/errors.js";
import { refreshAccessToken } from "../oauth/token-requests.js";
import { revokeToken } from "../oauth/token-revocation.js";
import type { TokenSet } from "../oauth/token-set.js";
import type { OAuthProviderRecord, OAuthTokenRecord } from "../storage/auth-types.js";
import type { ControlPlaneStorage } from "../storage/types.js";
import type { AuthProviderService } from "./auth-providers.js";
import type { AuthUser } from "./auth-users.js";

/** A token refreshed this long before it expires: the caller gets one that still works when it uses it. */
const REFRESH_MARGIN_MS = 60_000;

/** The summary answered for a token: never the token itself. */
export function presentToken(token: OAuthTokenRecord) {
  return {
    id: token.id,
    provider_id: token.provider_id,
    provider_account_label: token.provider_account_label,
    scopes: token.scopes,
    expires_at: token.expires_at,
    is_default: token.is_default,
    created_at: token.created_at,
    updated_at: token.updated_at,
  };
}

/** The provider refused to refresh the token: the user must consent again. */
export class TokenExpiredError extends Error {
  override readonly name = "TokenExpiredError";
}

/**
 * Users' OAuth tokens: stored encrypted, refreshed when they are about to
 * expire (one refresh at a time per token, so a rotating refresh token is
 * used once), revoked at the provider when deleted.
 */
export class AuthTokenService {
  private readonly refreshing = new Map<string, Promise<OAuthTokenRecord>>();

  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly box: SecretBox,
    private readonly providers: AuthProviderService,
    private readonly logger: Logger,
  ) {}

  async list(user: AuthUser, providerId?: string) {
    if (!user.userId) return [];
    return (await this.storage.auth.listTokens(user.tenantId, user.userId, providerId)).map(presentToken);
  }

  async exists(user: AuthUser, providerId: string): Promise<{ has_token: boolean }> {
    return { has_token: (await this.list(user, providerId)).length > 0 };
  }

  async updateMetadata(user: AuthUser, tokenId: string, input: TokenMetadataInput) {
    await this.owned(user, tokenId);
    const updated = await this.storage.auth.updateToken(
      user.tenantId,
      tokenId,
      {
        provider_account_label: input.provider_account_label,
        is_default: input.is_default ?? undefined,
      },
      new Date().toISOString(),
    );
    if (!updated) throw new NotFoundError(`Token ${tokenId} not found`);
    return presentToken(updated);
  }

  /** Revokes the token at the provider (when it has a revocation endpoint), then forgets it and its agent connections. */
  async delete(user: AuthUser, tokenId: string): Promise<void> {
    const token = await this.owned(user, tokenId);
    await this.revoke(token);
    await this.storage.auth.deleteToken(user.tenantId, tokenId);
  }

  /** Every token of the user for the provider: how many were deleted. */
  async deleteAll(user: AuthUser, providerId: string): Promise<{ deleted: number }> {
    await this.providers.find(user.tenantId, providerId);
    const tokens = user.userId ? await this.storage.auth.listTokens(user.tenantId, user.userId, providerId) : [];
    for (const token of tokens) {
      await this.revoke(token);
      await this.storage.auth.deleteToken(user.tenantId, token.id);
    }
    return { deleted: tokens.length };
  }

  /** Whether anyone in the workspace holds a token of a Slack provider. */
  async slackExists(tenantId: string): Promise<{ has_token: boolean }> {
    return { has_token: (await this.slackTokens(tenantId)).length > 0 };
  }

  /** Admins only: revokes and deletes every Slack token of the workspace. */
  async deleteSlack(user: AuthUser): Promise<{ deleted: number }> {
    if (!user.isAdmin) throw new ForbiddenError("Only an admin key may revoke the workspace's Slack tokens");
    const tokens = await this.slackTokens(user.tenantId);
    for (const token of tokens) {
      await this.revoke(token);
      await this.storage.auth.deleteToken(user.tenantId, token.id);
    }
    return { deleted: tokens.length };
  }

  /** Stores what a consent gave the user. */
  async store(
    provider: OAuthProviderRecord,
    owner: { tenantId: string; userId: string; deploymentId: string | null },
    tokens: TokenSet,
    isDefault: boolean,
  ): Promise<OAuthTokenRecord> {
    const now = new Date().toISOString();
    const token: OAuthTokenRecord = {
      id: randomUUID(),
      tenant_id: owner.tenantId,
      provider_id: provider.provider_id,
      user_id: owner.userId,
      provider_account_label: null,
      scopes: tokens.scopes,
      access_token_ciphertext: this.box.encrypt(tokens.access_token),
      refresh_token_ciphertext: tokens.refresh_token ? this.box.encrypt(tokens.refresh_token) : null,
      token_type: tokens.token_type,
      expires_at: tokens.expires_at,
      is_default: isDefault,
      created_at: now,
      updated_at: now,
      deployment_id: owner.deploymentId,
    };
    await this.storage.auth.createToken(token);
    return token;
  }

  /** The token's access token, refreshed first when it has expired or is about to; TokenExpiredError when the provider refuses. */
  async accessTokenOf(
    provider: OAuthProviderRecord,
    token: OAuthTokenRecord,
  ): Promise<{ token: OAuthTokenRecord; accessToken: string }> {
    let current = token;
    if (current.expires_at && Date.parse(current.expires_at) - REFRESH_MARGIN_MS <= Date.now()) {
      current = await this.refreshOnce(provider, current);
    }
    return { token: current, accessToken: this.box.decrypt(current.access_token_ciphertext) };
  }

  private refreshOnce(provider: OAuthProviderRecord, token: OAuthTokenRecord): Promise<OAuthTokenRecord> {
    const running = this.refreshing.get(token.id);
    if (running) return running;
    const refresh = this.refresh(provider, token).finally(() => this.refreshing.delete(token.id));
    this.refreshing.set(token.id, refresh);
    return refresh;
  }

  private async refresh(provider: OAuthProviderRecord, token: OAuthTokenRecord): Promise<OAuthTokenRecord> {
    // Another instance may have refreshed it meanwhile: start from the stored one.
    const stored = (await this.storage.auth.getToken(token.tenant_id, token.id)) ?? token;
    if (stored.expires_at && Date.parse(stored.expires_at) - REFRESH_MARGIN_MS > Date.now()) return stored;
    if (!stored.refresh_token_ciphertext) throw new TokenExpiredError("The token expired and the provider gave no refresh token");
    let refreshed: TokenSet;
    try {
      refreshed = await refreshAccessToken(
        this.providers.endpointsOf(provider),
        { refreshToken: this.box.decrypt(stored.refresh_token_ciphertext), scopes: stored.scopes },
        this.providers.outbound,
      );
    } catch (error) {
      if (
        error instanceof OAuthProviderError &&
        ["invalid_grant", "invalid_token", "unauthorized_client"].includes(error.error)
      ) {
        throw new TokenExpiredError(`The provider refused to refresh the token: ${error.message}`);
      }
      throw error;
    }
    const updated = await this.storage.auth.updateToken(
      stored.tenant_id,
      stored.id,
      {
        access_token_ciphertext: this.box.encrypt(refreshed.access_token),
        // A provider that does not rotate refresh tokens answers none: the old one stays valid.
        ...(refreshed.refresh_token ? { refresh_token_ciphertext: this.box.encrypt(refreshed.refresh_token) } : {}),
        token_type: refreshed.token_type ?? stored.token_type,
        expires_at: refreshed.expires_at,
        scopes: refreshed.scopes.length > 0 ? refreshed.scopes : stored.scopes,
      },
      new Date().toISOString(),
    );
    if (!updated) throw new TokenExpiredError("The token was deleted while it was being refreshed");
    return updated;
  }

  /** Revocation is best effort: a provider that refuses or cannot be reached does not keep the token stored here. */
  private async revoke(token: OAuthTokenRecord): Promise<void> {
    const provider = await this.storage.auth.getProvider(token.tenant_id, token.provider_id);
    if (!provider?.revocation_url) return;
    const endpoints = this.providers.endpointsOf(provider);
    const revocations = [
      ...(token.refresh_token_ciphertext
        ? [{ token: this.box.decrypt(token.refresh_token_ciphertext), tokenTypeHint: "refresh_token" as const }]
        : []),
      { token: this.box.decrypt(token.access_token_ciphertext), tokenTypeHint: "access_token" as const },
    ];
    for (const revocation of revocations) {
      try {
        await revokeToken(endpoints, revocation, this.providers.outbound);
      } catch (err) {
        this.logger.warn({ err, provider_id: token.provider_id, token_id: token.id }, "revoking a token at its provider failed");
      }
    }
  }

  private async owned(user: AuthUser, tokenId: string): Promise<OAuthTokenRecord> {
    const token = await this.storage.auth.getToken(user.tenantId, tokenId);
    if (!token || token.user_id !== user.userId) throw new NotFoundError(`Token ${tokenId} not found`);
    return token;
  }

  private async slackTokens(tenantId: string): Promise<OAuthTokenRecord[]> {
    const slack = (await this.storage.auth.listProviders(tenantId)).filter((provider) => provider.provider_type === "slack");
    return (
      await Promise.all(slack.map((provider) => this.storage.auth.listProviderTokens(tenantId, provider.provider_id)))
    ).flat();
  }
}
