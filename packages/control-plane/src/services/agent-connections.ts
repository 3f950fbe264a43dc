import { BadRequestError, NotFoundError } from "@berth/service-kit";
import { randomUUID } from "node:crypto";
import type { ConnectionCreateInput } from "../domain/inputs/auth-service.js";
import type { AgentConnectionRecord, OAuthTokenRecord } from "../storage/auth-types.js";
import type { ControlPlaneStorage } from "../storage/types.js";
import type { AuthUser } from "./auth-users.js";

function present(connection: AgentConnectionRecord, token: OAuthTokenRecord) {
  return {
    id: connection.id,
    agent_id: connection.agent_id,
    oauth_token_id: connection.oauth_token_id,
    provider_id: token.provider_id,
    provider_account_label: token.provider_account_label,
    scopes: token.scopes,
    expires_at: token.expires_at,
    created_by: connection.created_by,
    created_at: connection.created_at,
    deployment_id: connection.deployment_id,
  };
}

/**
 * Agent connections: a user binds one of their stored tokens to an agent (an
 * assistant or graph id), so the agent's runs get that token with no user
 * present. The workspace sees its agents' connections; only a token's owner
 * can bind it. A deployment's key gets a connection only when it was made for
 * that deployment (`deployment_id`), or its provider is shared across deployments.
 */
export class AgentConnectionService {
  constructor(private readonly storage: ControlPlaneStorage) {}

  async list(tenantId: string, agentId: string) {
    const connections = await this.storage.auth.listConnections(tenantId, agentId);
    const shown = await Promise.all(
      connections.map(async (connection) => {
        const token = await this.storage.auth.getToken(tenantId, connection.oauth_token_id);
        return token && present(connection, token);
      }),
    );
    return { data: shown.filter((connection) => connection !== undefined) };
  }

  async create(user: AuthUser, agentId: string, input: ConnectionCreateInput) {
    const tokenId = input.oauth_token_id;
    if (!user.userId) throw new BadRequestError("A deployment key cannot bind tokens to agents");
    const token = await this.storage.auth.getToken(user.tenantId, tokenId);
    if (!token || token.user_id !== user.userId) throw new NotFoundError(`Token ${tokenId} not found`);
    const deploymentId = input.deployment_id ?? null;
    if (deploymentId && !(await this.storage.deployments.get(user.tenantId, deploymentId))) {
      throw new NotFoundError(`Deployment ${deploymentId} not found`);
    }
    const connection: AgentConnectionRecord = {
      id: randomUUID(),
      tenant_id: user.tenantId,
      agent_id: agentId,
      oauth_token_id: tokenId,
      created_by: user.userId,
      created_at: new Date().toISOString(),
      deployment_id: deploymentId,
    };
    await this.storage.auth.createConnection(connection);
    return present(connection, token);
  }

  async delete(tenantId: string, agentId: string, connectionId: string): Promise<void> {
    if (!(await this.storage.auth.deleteConnection(tenantId, agentId, connectionId))) {
      throw new NotFoundError(`Connection ${connectionId} not found`);
    }
  }
}
