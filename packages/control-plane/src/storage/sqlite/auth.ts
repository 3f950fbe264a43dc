import { ConflictError, type SqliteDatabase } from "@berth/service-kit";
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

/** How SQLite stores what it has no type for: booleans as 0/1, scopes as JSON text (the names mean the same in every table). */
const BOOLEAN_COLUMNS: ReadonlySet<string> = new Set([
  "uses_pkce",
  "is_dynamic_client",
  "is_default",
  "shared_across_deployments",
]);
const JSON_COLUMNS: ReadonlySet<string> = new Set(["scopes"]);

function stored(column: string, value: unknown): unknown {
  if (BOOLEAN_COLUMNS.has(column)) return value ? 1 : 0;
  if (JSON_COLUMNS.has(column)) return JSON.stringify(value);
  return value;
}

/** The values of `record` for `columns`, as stored. */
function values(record: object, columns: readonly string[]): unknown[] {
  return columns.map((column) => stored(column, (record as Row)[column]));
}

function fromRow<T>(row: Row): T {
  const record: Row = { ...row };
  for (const column of Object.keys(record)) {
    if (BOOLEAN_COLUMNS.has(column)) record[column] = record[column] === 1;
    else if (JSON_COLUMNS.has(column)) record[column] = JSON.parse(record[column] as string);
  }
  return record as T;
}

const insert = (table: string, columns: readonly string[]) =>
  `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;

/** The `column = ?` assignments and stored values of the fields a change names (undefined: unchanged). */
function assignments(change: object, changeable: readonly string[]): { sql: string[]; values: unknown[] } {
  const names = changeable.filter((name) => (change as Row)[name] !== undefined);
  return { sql: names.map((name) => `${name} = ?`), values: names.map((name) => stored(name, (change as Row)[name])) };
}

export class SqliteAuthStore implements AuthStore {
  constructor(private readonly db: SqliteDatabase) {}

  async createProvider(provider: OAuthProviderRecord): Promise<void> {
    this.db
      .transaction(() => {
        const taken = this.db
          .prepare("SELECT 1 FROM oauth_providers WHERE tenant_id = ? AND provider_id = ?")
          .get(provider.tenant_id, provider.provider_id);
        if (taken) throw new ConflictError(`A provider with provider_id "${provider.provider_id}" already exists`);
        this.db.prepare(insert("oauth_providers", PROVIDER_COLUMNS)).run(...values(provider, PROVIDER_COLUMNS));
      })
      .immediate();
  }

  async getProvider(tenantId: string, providerId: string): Promise<OAuthProviderRecord | undefined> {
    const row = this.db
      .prepare(`SELECT ${PROVIDER} FROM oauth_providers WHERE tenant_id = ? AND provider_id = ?`)
      .get(tenantId, providerId) as Row | undefined;
    return row && fromRow(row);
  }

  async listProviders(tenantId: string): Promise<OAuthProviderRecord[]> {
    const rows = this.db
      .prepare(`SELECT ${PROVIDER} FROM oauth_providers WHERE tenant_id = ? ORDER BY created_at, id`)
      .all(tenantId) as Row[];
    return rows.map((row) => fromRow(row));
  }

  async updateProvider(
    tenantId: string,
    providerId: string,
    change: OAuthProviderChange,
    now: string,
  ): Promise<OAuthProviderRecord | undefined> {
    const set = assignments(change, PROVIDER_CHANGEABLE);
    const row = this.db
      .prepare(
        `UPDATE oauth_providers SET ${[...set.sql, "updated_at = ?"].join(", ")} WHERE tenant_id = ? AND provider_id = ?
         RETURNING ${PROVIDER}`,
      )
      .get(...set.values, now, tenantId, providerId) as Row | undefined;
    return row && fromRow(row);
  }

  async deleteProvider(tenantId: string, providerId: string): Promise<boolean> {
    // Its tokens (with their connections) and flows go by ON DELETE CASCADE, in this statement.
    return (
      this.db.prepare("DELETE FROM oauth_providers WHERE tenant_id = ? AND provider_id = ?").run(tenantId, providerId).changes > 0
    );
  }

  async createFlow(flow: AuthFlowRecord): Promise<void> {
    this.db.prepare(insert("auth_flows", FLOW_COLUMNS)).run(...values(flow, FLOW_COLUMNS));
  }

  async getFlow(id: string): Promise<AuthFlowRecord | undefined> {
    const row = this.db.prepare(`SELECT ${FLOW} FROM auth_flows WHERE id = ?`).get(id) as Row | undefined;
    return row && fromRow(row);
  }

  async finishFlow(
    id: string,
    outcome: { status: "completed" | "failed"; token_id?: string | null; error?: string | null },
    now: string,
  ): Promise<AuthFlowRecord | undefined> {
    // One conditional statement: of two finishes (two processes too), the second finds it no longer pending.
    const row = this.db
      .prepare(
        `UPDATE auth_flows SET status = ?, token_id = ?, error = ?, finished_at = ? WHERE id = ? AND status = 'pending'
         RETURNING ${FLOW}`,
      )
      .get(outcome.status, outcome.token_id ?? null, outcome.error ?? null, now, id) as Row | undefined;
    return row && fromRow(row);
  }

  async deleteExpiredFlows(before: string): Promise<number> {
    return this.db.prepare("DELETE FROM auth_flows WHERE expires_at < ?").run(before).changes;
  }

  async createToken(token: OAuthTokenRecord): Promise<void> {
    this.db
      .transaction(() => {
        if (token.is_default) this.unmarkDefault(token.tenant_id, token.user_id, token.provider_id, token.id);
        this.db.prepare(insert("oauth_tokens", TOKEN_COLUMNS)).run(...values(token, TOKEN_COLUMNS));
      })
      .immediate();
  }

  async getToken(tenantId: string, id: string): Promise<OAuthTokenRecord | undefined> {
    const row = this.db.prepare(`SELECT ${TOKEN} FROM oauth_tokens WHERE tenant_id = ? AND id = ?`).get(tenantId, id) as
      | Row
      | undefined;
    return row && fromRow(row);
  }

  async listTokens(tenantId: string, userId: string, providerId?: string): Promise<OAuthTokenRecord[]> {
    const rows = (
      providerId === undefined
        ? this.db
            .prepare(`SELECT ${TOKEN} FROM oauth_tokens WHERE tenant_id = ? AND user_id = ? ORDER BY created_at, id`)
            .all(tenantId, userId)
        : this.db
            .prepare(
              `SELECT ${TOKEN} FROM oauth_tokens WHERE tenant_id = ? AND user_id = ? AND provider_id = ? ORDER BY created_at, id`,
            )
            .all(tenantId, userId, providerId)
    ) as Row[];
    return rows.map((row) => fromRow(row));
  }

  async listProviderTokens(tenantId: string, providerId: string): Promise<OAuthTokenRecord[]> {
    const rows = this.db
      .prepare(`SELECT ${TOKEN} FROM oauth_tokens WHERE tenant_id = ? AND provider_id = ? ORDER BY created_at, id`)
      .all(tenantId, providerId) as Row[];
    return rows.map((row) => fromRow(row));
  }

  async updateToken(tenantId: string, id: string, change: OAuthTokenChange, now: string): Promise<OAuthTokenRecord | undefined> {
    const set = assignments(change, TOKEN_CHANGEABLE);
    return this.db
      .transaction(() => {
        const owner = this.db
          .prepare("SELECT user_id, provider_id FROM oauth_tokens WHERE tenant_id = ? AND id = ?")
          .get(tenantId, id) as { user_id: string; provider_id: string } | undefined;
        if (!owner) return undefined; // another workspace's token unmarks nothing
        if (change.is_default) this.unmarkDefault(tenantId, owner.user_id, owner.provider_id, id);
        const row = this.db
          .prepare(
            `UPDATE oauth_tokens SET ${[...set.sql, "updated_at = ?"].join(", ")} WHERE tenant_id = ? AND id = ? RETURNING ${TOKEN}`,
          )
          .get(...set.values, now, tenantId, id) as Row;
        return fromRow<OAuthTokenRecord>(row);
      })
      .immediate();
  }

  /** Unmarks the user's default token for the provider, unless it is `keep`. */
  private unmarkDefault(tenantId: string, userId: string, providerId: string, keep: string): void {
    this.db
      .prepare(
        `UPDATE oauth_tokens SET is_default = 0
         WHERE tenant_id = ? AND user_id = ? AND provider_id = ? AND is_default = 1 AND id <> ?`,
      )
      .run(tenantId, userId, providerId, keep);
  }

  async deleteToken(tenantId: string, id: string): Promise<boolean> {
    // Its agent connections go by ON DELETE CASCADE.
    return this.db.prepare("DELETE FROM oauth_tokens WHERE tenant_id = ? AND id = ?").run(tenantId, id).changes > 0;
  }

  async createConnection(connection: AgentConnectionRecord): Promise<void> {
    this.db
      .transaction(() => {
        const taken = this.db
          .prepare("SELECT 1 FROM agent_connections WHERE tenant_id = ? AND agent_id = ? AND oauth_token_id = ?")
          .get(connection.tenant_id, connection.agent_id, connection.oauth_token_id);
        if (taken) {
          throw new ConflictError(`Agent ${connection.agent_id} is already connected to token ${connection.oauth_token_id}`);
        }
        this.db.prepare(insert("agent_connections", CONNECTION_COLUMNS)).run(...values(connection, CONNECTION_COLUMNS));
      })
      .immediate();
  }

  async listConnections(tenantId: string, agentId: string): Promise<AgentConnectionRecord[]> {
    return this.db
      .prepare(`SELECT ${CONNECTION} FROM agent_connections WHERE tenant_id = ? AND agent_id = ? ORDER BY created_at, id`)
      .all(tenantId, agentId) as AgentConnectionRecord[];
  }

  async deleteConnection(tenantId: string, agentId: string, id: string): Promise<boolean> {
    return (
      this.db.prepare("DELETE FROM agent_connections WHERE tenant_id = ? AND agent_id = ? AND id = ?").run(tenantId, agentId, id)
        .changes > 0
    );
  }
}
