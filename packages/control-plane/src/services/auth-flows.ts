import { BadRequestError, NotFoundError } from "@berth/service-kit";
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { EventEmitter, once } from "node:events";
import type { AuthenticateInput } from "../domain/inputs/auth-service.js";
import type { SecretBox } from "../domain/secret-box.js";
import { flowIdFromState, startAuthorization } from "../oauth/authorization-request.js";
import { OAuthError } from "../oauth/errors.js";
import type { PrivateAddressAllowance } from "../oauth/outbound.js";
import { exchangeAuthorizationCode } from "../oauth/token-requests.js";
import type { AuthFlowRecord, OAuthProviderRecord, OAuthTokenRecord } from "../storage/auth-types.js";
import type { ControlPlaneStorage } from "../storage/types.js";
import { type AuthProviderService, callbackUrlOf } from "./auth-providers.js";
import { type AuthTokenService, TokenExpiredError } from "./auth-tokens.js";
import type { AuthUser } from "./auth-users.js";
import { withProvider } from "./provider-errors.js";

export interface AuthFlowSettings {
  /** How long a consent link works (BERTH_AUTH_FLOW_SECONDS). */
  flowTtlMs: number;
  /** Which private addresses provider and discovery requests may reach (BERTH_OUTBOUND_ALLOW_PRIVATE). */
  allowPrivate?: PrivateAddressAllowance;
}
/** How long a finished or expired flow stays readable by wait before it is deleted. */
const FLOW_RETENTION_MS = 24 * 60 * 60_000;
/** The longest a wait holds the request. */
const MAX_WAIT_SECONDS = 120;
/** Another instance may finish the flow: wait looks at the database this often too. */
const WAIT_POLL_MS = 500;

export type AuthenticateStatus = "completed" | "pending" | "connection_required" | "token_expired";

export interface AuthenticateAnswer {
  status: AuthenticateStatus;
  url: string | null;
  auth_id: string | null;
  token: string | null;
  user_id: string | null;
  metadata: Record<string, unknown> | null;
}

export interface WaitAnswer {
  status: "completed" | "pending" | "timeout" | "not_found" | "failed";
  token: string | null;
  /** Why the consent failed (the provider's error, or the code exchange's). */
  error?: string;
}

/** What the provider's redirect came to: shown to the user on the callback page. */
export interface CallbackOutcome {
  status: "completed" | "failed";
  auth_id: string;
  provider_name: string;
  error: string | null;
}

/** A redirect the callback refuses before anything happens: no flow, another provider's, a replay, an expired state. */
export class CallbackRefused extends BadRequestError {}

const hashState = (state: string) => createHash("sha256").update(state).digest("hex");

/**
 * The consent flow: authenticate answers a stored token (refreshed) or starts
 * an authorization-code flow; the provider's redirect finishes it, once;
 * wait long-polls until it has.
 */
export class AuthFlowService {
  private readonly finished = new EventEmitter().setMaxListeners(0);
  private readonly claimed = new Set<string>();

  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly box: SecretBox,
    private readonly providers: AuthProviderService,
    private readonly tokens: AuthTokenService,
    private readonly settings: AuthFlowSettings,
  ) {}

  /**
   * The user's own stored token first; else a token bound to the agent; else
   * a consent for the user (connection_required when no user is named).
   */
  async authenticate(user: AuthUser, input: AuthenticateInput, callbackBase: string): Promise<AuthenticateAnswer> {
    return withProvider(() => this.tokenOrConsent(user, input, callbackBase));
  }

  private async tokenOrConsent(user: AuthUser, input: AuthenticateInput, callbackBase: string): Promise<AuthenticateAnswer> {
    const provider = await this.providers.find(user.tenantId, input.provider);
    const scopes = [...new Set(input.scopes)];
    if (!user.userId && !input.agent_id) {
      throw new BadRequestError("Name the user (user_id) or the agent (agent_id) the token is for");
    }
    const owner = user.userId ? { tenantId: user.tenantId, userId: user.userId } : undefined;
    const stored = owner && (await this.storedToken(user, owner, provider, scopes, input));
    if (owner && stored) {
      try {
        return await this.answerWith(provider, stored, {});
      } catch (error) {
        if (!(error instanceof TokenExpiredError)) throw error;
        const flow = await this.start(user, owner, provider, scopes, input, callbackBase);
        return { ...flow, status: "token_expired", metadata: { token_id: stored.id, reason: error.message } };
      }
    }
    if (input.agent_id && !input.force_new) {
      const connected = await this.connectedToken(user, input.agent_id, provider, scopes);
      if (connected) {
        const bound = { agent_id: input.agent_id, connection_id: connected.connectionId };
        try {
          return await this.answerWith(provider, connected.token, bound);
        } catch (error) {
          if (!(error instanceof TokenExpiredError)) throw error;
          // The bound token's owner must consent again; a user of the run can consent for themselves.
          const expired = { ...bound, token_id: connected.token.id, reason: error.message };
          if (!owner) return { ...empty("token_expired"), metadata: expired };
          return {
            ...(await this.start(user, owner, provider, scopes, input, callbackBase)),
            status: "token_expired",
            metadata: expired,
          };
        }
      }
    }
    if (!owner) return { ...empty("connection_required"), metadata: { agent_id: input.agent_id } };
    return this.start(user, owner, provider, scopes, input, callbackBase);
  }

  /**
   * May this caller get a token stored by (or a connection made for) `deploymentId`?
   * Workspace and admin keys: yes. A deployment's key: only its own, unless the
   * provider is shared across the workspace's deployments.
   */
  private reaches(user: AuthUser, provider: OAuthProviderRecord, deploymentId: string | null): boolean {
    return !user.deploymentId || provider.shared_across_deployments || deploymentId === user.deploymentId;
  }

  /** The provider's redirect (or a front end relaying it): exchanges the code and stores the token, once per state. */
  async callback(
    providerId: string,
    params: { code?: string; state?: string; error?: string; error_description?: string },
  ): Promise<CallbackOutcome> {
    const flow = await this.flowOfState(providerId, params.state);
    // One redirect at a time per flow here: a replay racing the user's own must not fail it.
    if (this.claimed.has(flow.id)) throw new CallbackRefused("This sign-in link was already used");
    this.claimed.add(flow.id);
    try {
      return await this.finishWithRedirect(flow, params);
    } finally {
      this.claimed.delete(flow.id);
    }
  }

  private async finishWithRedirect(
    flow: AuthFlowRecord,
    params: { code?: string; error?: string; error_description?: string },
  ): Promise<CallbackOutcome> {
    const provider = await this.storage.auth.getProvider(flow.tenant_id, flow.provider_id);
    if (!provider) throw new CallbackRefused("The provider of this sign-in was deleted");
    const outcome = (status: CallbackOutcome["status"], error: string | null): CallbackOutcome => ({
      status,
      auth_id: flow.id,
      provider_name: provider.name,
      error,
    });
    if (params.error) {
      const error = params.error_description ? `${params.error}: ${params.error_description}` : params.error;
      await this.finish(flow.id, { status: "failed", error });
      return outcome("failed", error);
    }
    if (!params.code) throw new CallbackRefused("The redirect carries neither a code nor an error");
    let token: OAuthTokenRecord;
    try {
      const tokenSet = await exchangeAuthorizationCode(
        this.providers.endpointsOf(provider),
        {
          code: params.code,
          redirectUri: flow.redirect_uri,
          codeVerifier: flow.code_verifier_ciphertext && this.box.decrypt(flow.code_verifier_ciphertext),
          scopes: flow.scopes,
        },
        this.providers.outbound,
      );
      const owner = { tenantId: flow.tenant_id, userId: flow.user_id, deploymentId: flow.deployment_id };
      token = await this.tokens.store(provider, owner, tokenSet, flow.is_default);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (!(await this.finish(flow.id, { status: "failed", error: error.message }))) {
        throw new CallbackRefused("This sign-in link was already used");
      }
      return outcome("failed", error.message);
    }
    if (!(await this.finish(flow.id, { status: "completed", token_id: token.id }))) {
      // Another redirect with the same state finished it first: this one's token goes.
      await this.storage.auth.deleteToken(flow.tenant_id, token.id);
      throw new CallbackRefused("This sign-in link was already used");
    }
    return outcome("completed", null);
  }

  /** Long-polls the flow until it finished or `timeoutSeconds` passed. */
  async wait(user: AuthUser, authId: string, timeoutSeconds: number): Promise<WaitAnswer> {
    const deadline = Date.now() + Math.min(timeoutSeconds, MAX_WAIT_SECONDS) * 1000;
    for (;;) {
      const flow = await this.storage.auth.getFlow(authId);
      if (!flow || !this.mayWaitFor(user, flow)) return { status: "not_found", token: null };
      if (flow.status === "completed") {
        const token = flow.token_id ? await this.storage.auth.getToken(flow.tenant_id, flow.token_id) : undefined;
        if (!token) return { status: "not_found", token: null };
        const provider = await this.providers.find(flow.tenant_id, flow.provider_id);
        try {
          const usable = await withProvider(() => this.tokens.accessTokenOf(provider, token));
          return { status: "completed", token: usable.accessToken };
        } catch (error) {
          if (!(error instanceof TokenExpiredError)) throw error;
          return { status: "failed", token: null, error: error.message };
        }
      }
      if (flow.status === "failed") return { status: "failed", token: null, error: flow.error ?? "The consent failed" };
      const left = Math.min(deadline, Date.parse(flow.expires_at)) - Date.now();
      if (left <= 0) return { status: "timeout", token: null };
      const signal = AbortSignal.timeout(Math.min(left, WAIT_POLL_MS));
      await once(this.finished, authId, { signal }).catch(() => undefined);
    }
  }

  /** The user's own consents; a deployment's key the consents it started; an admin key any of the workspace's. */
  private mayWaitFor(user: AuthUser, flow: AuthFlowRecord): boolean {
    if (flow.tenant_id !== user.tenantId) return false;
    if (user.deploymentId) return flow.deployment_id === user.deploymentId;
    return flow.user_id === user.userId || user.actsForOthers;
  }

  private async start(
    user: AuthUser,
    owner: { tenantId: string; userId: string },
    provider: OAuthProviderRecord,
    scopes: string[],
    input: AuthenticateInput,
    callbackBase: string,
  ): Promise<AuthenticateAnswer> {
    const id = randomUUID();
    const redirectUri = callbackUrlOf(callbackBase, provider.provider_id);
    const started = await startAuthorization(this.providers.endpointsOf(provider), { flowId: id, redirectUri, scopes });
    const now = Date.now();
    const flow: AuthFlowRecord = {
      id,
      tenant_id: owner.tenantId,
      provider_id: provider.provider_id,
      user_id: owner.userId,
      agent_id: input.agent_id ?? null,
      scopes,
      state_hash: hashState(started.state),
      code_verifier_ciphertext: started.code_verifier && this.box.encrypt(started.code_verifier),
      redirect_uri: redirectUri,
      is_default: input.is_default,
      status: "pending",
      token_id: null,
      error: null,
      expires_at: new Date(now + this.settings.flowTtlMs).toISOString(),
      created_at: new Date(now).toISOString(),
      finished_at: null,
      deployment_id: user.deploymentId,
    };
    await this.storage.auth.createFlow(flow);
    await this.storage.auth.deleteExpiredFlows(new Date(now - FLOW_RETENTION_MS).toISOString());
    return { ...empty("pending"), url: started.url, auth_id: id, user_id: owner.userId };
  }

  private async answerWith(
    provider: OAuthProviderRecord,
    token: OAuthTokenRecord,
    metadata: Record<string, unknown>,
  ): Promise<AuthenticateAnswer> {
    const usable = await this.tokens.accessTokenOf(provider, token);
    return {
      ...empty("completed"),
      token: usable.accessToken,
      user_id: usable.token.user_id,
      metadata: { ...metadata, token_id: usable.token.id, expires_at: usable.token.expires_at, scopes: usable.token.scopes },
    };
  }

  /**
   * The user's token for the provider: the one named, else a default (or newest) one holding every scope asked for;
   * of the tokens the caller reaches (a deployment's key: those its consents stored, unless the provider is shared).
   */
  private async storedToken(
    user: AuthUser,
    owner: { tenantId: string; userId: string },
    provider: OAuthProviderRecord,
    scopes: string[],
    input: AuthenticateInput,
  ): Promise<OAuthTokenRecord | undefined> {
    if (input.token_id) {
      const token = await this.storage.auth.getToken(owner.tenantId, input.token_id);
      const named = token && token.user_id === owner.userId && token.provider_id === provider.provider_id;
      if (!named || !this.reaches(user, provider, token.deployment_id)) {
        throw new NotFoundError(`Token ${input.token_id} not found`);
      }
      return token;
    }
    if (input.force_new) return undefined;
    const holding = (await this.storage.auth.listTokens(owner.tenantId, owner.userId, provider.provider_id)).filter(
      (token) => covers(token, scopes) && this.reaches(user, provider, token.deployment_id),
    );
    return holding.find((token) => token.is_default) ?? holding.at(-1);
  }

  /** A token bound to the agent; a deployment's key: by a connection made for it (unless the provider is shared). */
  private async connectedToken(user: AuthUser, agentId: string, provider: OAuthProviderRecord, scopes: string[]) {
    const { tenantId } = user;
    for (const connection of await this.storage.auth.listConnections(tenantId, agentId)) {
      if (!this.reaches(user, provider, connection.deployment_id)) continue;
      const token = await this.storage.auth.getToken(tenantId, connection.oauth_token_id);
      if (token && token.provider_id === provider.provider_id && covers(token, scopes)) {
        return { token, connectionId: connection.id };
      }
    }
    return undefined;
  }

  /** The pending flow a redirect's state names: refused unless the state is whole, unused, unexpired and the provider's. */
  private async flowOfState(providerId: string, state: string | undefined): Promise<AuthFlowRecord> {
    if (!state) throw new CallbackRefused("The redirect carries no state");
    const flowId = flowIdFromState(state);
    const flow = flowId ? await this.storage.auth.getFlow(flowId) : undefined;
    const expected = flow ? Buffer.from(flow.state_hash, "hex") : Buffer.alloc(32);
    const matches = timingSafeEqual(expected, Buffer.from(hashState(state), "hex"));
    if (!flow || !matches || flow.provider_id !== providerId) throw new CallbackRefused("Unknown or mismatched state");
    if (flow.status !== "pending") throw new CallbackRefused("This sign-in link was already used");
    if (Date.parse(flow.expires_at) <= Date.now()) {
      await this.finish(flow.id, { status: "failed", error: "The sign-in link expired" });
      throw new CallbackRefused("This sign-in link expired: ask for a new one");
    }
    return flow;
  }

  private async finish(id: string, outcome: { status: "completed" | "failed"; token_id?: string; error?: string }) {
    const finished = await this.storage.auth.finishFlow(id, outcome, new Date().toISOString());
    if (finished) this.finished.emit(id);
    return finished;
  }
}

function empty(status: AuthenticateStatus): AuthenticateAnswer {
  return { status, url: null, auth_id: null, token: null, user_id: null, metadata: null };
}

const covers = (token: OAuthTokenRecord, scopes: string[]) => scopes.every((scope) => token.scopes.includes(scope));
