import { ConflictError, isUniqueViolation, jsonb, type Queryable, withTransaction } from "@berth/service-kit";
import type pg from "pg";
import {
  CONNECTION,
  CONNECTION_COLUMNS,
  FLOW,
  FLOW_COLUMNS,
  PROVIDER,
  PROVIDER_CHANGEABLE,
  PROVIDER_COLUMNS,
  TOKEN,
  TOKEN_CHANGEABLE,
  TOKEN_COLUMNS,
} from "../auth-columns.js";
import type {
  AgentConnectionRecord,
  AuthFlowRecord,
  AuthStore,
  OAuthProviderChange,
  OAuthProviderRecord,
  OAuthTokenChange,
  OAuthTokenRecord,
} from "../auth-types.js";

type Row = Record<string, unknown>;

/** Parameter `n` for `column`: scopes go as JSON text to jsonb (the name means the same in every table). */
const param = (column: string, n: number) => (column === "scopes" ? `$${n}::jsonb` : `$${n}`);
const parameter = (column: string, value: unknown) => (column === "scopes" ? jsonb(value) : value);

function insert(table: string, columns: readonly string[], record: object): [string, unknown[]] {
  return [
    `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((column, i) => param(column, i + 1)).join(", ")})`,
    columns.map((column) => parameter(column, (record as Row)[column])),
  ];
}

/** The `column = $n` assignments (from $`first` on) and values of the fields a change names (undefined: unchanged). */
function assignments(change: object, changeable: readonly string[], first: number): { sql: string[]; values: unknown[] } {
  const names = changeable.filter((name) => (change as Row)[name] !== undefined);
  return {
    sql: names.map((name, i) => `${name} = ${param(name, first + i)}`),
    values: names.map((name) => parameter(name, (change as Row)[name])),
  };
}

export class PostgresAuthStore implements AuthStore {
  constructor(private readonly pool: pg.Pool) {}

  async createProvider(provider: OAuthProviderRecord): Promise<void> {
    try {
      await this.pool.query(...insert("oauth_providers", PROVIDER_COLUMNS, provider));
    } catch (err) {
      if (isUniqueViolation(err, "oauth_providers_tenant_provider_id")) {
        throw new ConflictError(`A provider with provider_id "${provider.provider_id}" already exists`);
      }
      throw err;
    }
  }

  async getProvider(tenantId: string, providerId: string): Promise<OAuthProviderRecord | undefined> {
    const { rows } = await this.pool.query<OAuthProviderRecord>(
      `SELECT ${PROVIDER} FROM oauth_providers WHERE tenant_id = $1 AND provider_id = $2`,
      [tenantId, providerId],
    );
    return rows[0];
  }

  async listProviders(tenantId: string): Promise<OAuthProviderRecord[]> {
    const { rows } = await this.pool.query<OAuthProviderRecord>(
      `SELECT ${PROVIDER} FROM oauth_providers WHERE tenant_id = $1 ORDER BY created_at, id`,
      [tenantId],
    );
    return rows;
  }

  async updateProvider(
    tenantId: string,
    providerId: string,
    change: OAuthProviderChange,
    now: string,
  ): Promise<OAuthProviderRecord | undefined> {
    const set = assignments(change, PROVIDER_CHANGEABLE, 4);
    const { rows } = await this.pool.query<OAuthProviderRecord>(
      `UPDATE oauth_providers SET ${[...set.sql, "updated_at = $3"].join(", ")} WHERE tenant_id = $1 AND provider_id = $2
       RETURNING ${PROVIDER}`,
      [tenantId, providerId, now, ...set.values],
    );
    return rows[0];
  }

  async deleteProvider(tenantId: string, providerId: string): Promise<boolean> {
    // Its tokens (with their connections) and flows go by ON DELETE CASCADE, in this statement. In a
    // transaction so that it runs again if it loses a deadlock to a token's change (the cascade locks
    // the tokens in no set order).
    return withTransaction(this.pool, async (client) => {
      const { rowCount } = await client.query("DELETE FROM oauth_providers WHERE tenant_id = $1 AND provider_id = $2", [
        tenantId,
        providerId,
      ]);
      return (rowCount ?? 0) > 0;
    });
  }

  async createFlow(flow: AuthFlowRecord): Promise<void> {
    await this.pool.query(...insert("auth_flows", FLOW_COLUMNS, flow));
  }

  async getFlow(id: string): Promise<AuthFlowRecord | undefined> {
    const { rows } = await this.pool.query<AuthFlowRecord>(`SELECT ${FLOW} FROM auth_flows WHERE id = $1`, [id]);
    return rows[0];
  }

  async finishFlow(
    id: string,
    outcome: { status: "completed" | "failed"; token_id?: string | null; error?: string | null },
    now: string,
  ): Promise<AuthFlowRecord | undefined> {
    // One conditional statement: a concurrent finish waits for the row lock,
    // then re-reads the row, no longer pending, and updates nothing.
    const { rows } = await this.pool.query<AuthFlowRecord>(
      `UPDATE auth_flows SET status = $2, token_id = $3, error = $4, finished_at = $5 WHERE id = $1 AND status = 'pending'
       RETURNING ${FLOW}`,
      [id, outcome.status, outcome.token_id ?? null, outcome.error ?? null, now],
    );
    return rows[0];
  }

  async deleteExpiredFlows(before: string): Promise<number> {
    const { rowCount } = await this.pool.query("DELETE FROM auth_flows WHERE expires_at < $1", [before]);
    return rowCount ?? 0;
  }

  async createToken(token: OAuthTokenRecord): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      if (token.is_default) {
        await lockDefault(client, token.tenant_id, token.user_id, token.provider_id);
        await unmarkDefault(client, token.tenant_id, token.user_id, token.provider_id, token.id);
      }
      await client.query(...insert("oauth_tokens", TOKEN_COLUMNS, token));
    });
  }

  async getToken(tenantId: string, id: string): Promise<OAuthTokenRecord | undefined> {
    const { rows } = await this.pool.query<OAuthTokenRecord>(
      `SELECT ${TOKEN} FROM oauth_tokens WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id],
    );
    return rows[0];
  }

  async listTokens(tenantId: string, userId: string, providerId?: string): Promise<OAuthTokenRecord[]> {
    const { rows } = await this.pool.query<OAuthTokenRecord>(
      `SELECT ${TOKEN} FROM oauth_tokens WHERE tenant_id = $1 AND user_id = $2 ${providerId === undefined ? "" : "AND provider_id = $3"}
       ORDER BY created_at, id`,
      providerId === undefined ? [tenantId, userId] : [tenantId, userId, providerId],
    );
    return rows;
  }

  async listProviderTokens(tenantId: string, providerId: string): Promise<OAuthTokenRecord[]> {
    const { rows } = await this.pool.query<OAuthTokenRecord>(
      `SELECT ${TOKEN} FROM oauth_tokens WHERE tenant_id = $1 AND provider_id = $2 ORDER BY created_at, id`,
      [tenantId, providerId],
    );
    return rows;
  }

  async updateToken(tenantId: string, id: string, change: OAuthTokenChange, now: string): Promise<OAuthTokenRecord | undefined> {
    const set = assignments(change, TOKEN_CHANGEABLE, 4);
    const update = `UPDATE oauth_tokens SET ${[...set.sql, "updated_at = $3"].join(", ")} WHERE tenant_id = $1 AND id = $2
      RETURNING ${TOKEN}`;
    if (!change.is_default) {
      const { rows } = await this.pool.query<OAuthTokenRecord>(update, [tenantId, id, now, ...set.values]);
      return rows[0];
    }
    return withTransaction(this.pool, async (client) => {
      // A token's user and provider never change: read before the lock, which they name.
      const owner = await client.query<{ user_id: string; provider_id: string }>(
        "SELECT user_id, provider_id FROM oauth_tokens WHERE tenant_id = $1 AND id = $2",
        [tenantId, id],
      );
      if (!owner.rowCount) return undefined; // another workspace's token unmarks nothing
      const { user_id, provider_id } = owner.rows[0]!;
      await lockDefault(client, tenantId, user_id, provider_id);
      // NO KEY UPDATE: holds off its deletion (and its provider's), not the connections' key checks. A
      // deletion that committed meanwhile leaves no row: then nothing is unmarked.
      const kept = await client.query("SELECT 1 FROM oauth_tokens WHERE tenant_id = $1 AND id = $2 FOR NO KEY UPDATE", [
        tenantId,
        id,
      ]);
      if (!kept.rowCount) return undefined;
      await unmarkDefault(client, tenantId, user_id, provider_id, id);
      const { rows } = await client.query<OAuthTokenRecord>(update, [tenantId, id, now, ...set.values]);
      return rows[0];
    });
  }

  async deleteToken(tenantId: string, id: string): Promise<boolean> {
    // Its agent connections go by ON DELETE CASCADE.
    const { rowCount } = await this.pool.query("DELETE FROM oauth_tokens WHERE tenant_id = $1 AND id = $2", [tenantId, id]);
    return (rowCount ?? 0) > 0;
  }

  async createConnection(connection: AgentConnectionRecord): Promise<void> {
    try {
      await this.pool.query(...insert("agent_connections", CONNECTION_COLUMNS, connection));
    } catch (err) {
      if (isUniqueViolation(err, "agent_connections_tenant_agent_token")) {
        throw new ConflictError(`Agent ${connection.agent_id} is already connected to token ${connection.oauth_token_id}`);
      }
      throw err;
    }
  }

  async listConnections(tenantId: string, agentId: string): Promise<AgentConnectionRecord[]> {
    const { rows } = await this.pool.query<AgentConnectionRecord>(
      `SELECT ${CONNECTION} FROM agent_connections WHERE tenant_id = $1 AND agent_id = $2 ORDER BY created_at, id`,
      [tenantId, agentId],
    );
    return rows;
  }

  async deleteConnection(tenantId: string, agentId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "DELETE FROM agent_connections WHERE tenant_id = $1 AND agent_id = $2 AND id = $3",
      [tenantId, agentId, id],
    );
    return (rowCount ?? 0) > 0;
  }
}

/**
 * Takes a per-(workspace, user, provider) lock until the transaction ends, so
 * that concurrent new defaults take turns: the last one wins, and
 * oauth_tokens_default never fires.
 */
async function lockDefault(client: Queryable, tenantId: string, userId: string, providerId: string): Promise<void> {
  await client.query(
    "SELECT pg_advisory_xact_lock(hashtext('berth.oauth_token_default:' || current_schema() || ':' || $1 || ':' || $2 || ':' || $3))",
    [tenantId, userId, providerId],
  );
}

/** Unmarks the user's default token for the provider, unless it is `keep` (under lockDefault). */
async function unmarkDefault(
  client: Queryable,
  tenantId: string,
  userId: string,
  providerId: string,
  keep: string,
): Promise<void> {
  await client.query(
    `UPDATE oauth_tokens SET is_default = false
     WHERE tenant_id = $1 AND user_id = $2 AND provider_id = $3 AND is_default AND id <> $4`,
    [tenantId, userId, providerId, keep],
  );
}
