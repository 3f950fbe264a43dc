import type { SqliteDatabase } from "@berth/service-kit";
import type {
  IntegrationRecord,
  LogEntry,
  LogFilter,
  LogRecord,
  LogStore,
  IntegrationStore,
  TracingProjectRecord,
  TracingProjectStore,
  UploadRecord,
  UploadStore,
} from "../types.js";
import { integrationFromRow } from "./rows.js";

type Row = Record<string, unknown>;

export class SqliteIntegrationStore implements IntegrationStore {
  constructor(private readonly db: SqliteDatabase) {}

  async create(integration: IntegrationRecord): Promise<void> {
    this.db
      .prepare(
        "INSERT INTO integrations (id, tenant_id, name, provider, installation_id, repos, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      )
      .run(
        integration.id,
        integration.tenant_id,
        integration.name,
        integration.provider,
        integration.installation_id,
        JSON.stringify(integration.repos),
        integration.created_at,
      );
  }

  async get(tenantId: string, id: string): Promise<IntegrationRecord | undefined> {
    const row = this.db.prepare("SELECT * FROM integrations WHERE tenant_id = ? AND id = ?").get(tenantId, id) as Row | undefined;
    return row && integrationFromRow(row);
  }

  async list(tenantId: string): Promise<IntegrationRecord[]> {
    const rows = this.db.prepare("SELECT * FROM integrations WHERE tenant_id = ? ORDER BY created_at, id").all(tenantId) as Row[];
    return rows.map(integrationFromRow);
  }
}

export class SqliteUploadStore implements UploadStore {
  constructor(private readonly db: SqliteDatabase) {}

  async create(upload: UploadRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO uploads (upload_id, object_path, deployment_id, tenant_id, created_at, expires_at, uploaded_at, size_bytes, sha256)
         VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL)`,
      )
      .run(upload.upload_id, upload.object_path, upload.deployment_id, upload.tenant_id, upload.created_at, upload.expires_at);
  }

  async getById(uploadId: string): Promise<UploadRecord | undefined> {
    return this.db.prepare("SELECT * FROM uploads WHERE upload_id = ?").get(uploadId) as UploadRecord | undefined;
  }

  async getByPath(objectPath: string): Promise<UploadRecord | undefined> {
    return this.db.prepare("SELECT * FROM uploads WHERE object_path = ?").get(objectPath) as UploadRecord | undefined;
  }

  async markUploaded(uploadId: string, sizeBytes: number, sha256: string, now: string): Promise<void> {
    this.db
      .prepare("UPDATE uploads SET uploaded_at = ?, size_bytes = ?, sha256 = ? WHERE upload_id = ?")
      .run(now, sizeBytes, sha256, uploadId);
  }

  async isUsed(objectPath: string): Promise<boolean> {
    return !!this.db
      .prepare("SELECT 1 FROM revisions WHERE json_extract(source_revision_config, '$.source_tarball_path') = ? LIMIT 1")
      .get(objectPath);
  }
}

export class SqliteTracingProjectStore implements TracingProjectStore {
  constructor(private readonly db: SqliteDatabase) {}

  async getByName(tenantId: string, name: string): Promise<TracingProjectRecord | undefined> {
    return this.db.prepare("SELECT * FROM tracing_projects WHERE tenant_id = ? AND name = ?").get(tenantId, name) as
      | TracingProjectRecord
      | undefined;
  }
}

export class SqliteLogStore implements LogStore {
  constructor(private readonly db: SqliteDatabase) {}

  async append(entries: LogEntry[]): Promise<void> {
    const insert = this.db.prepare(
      "INSERT INTO deployment_logs (deployment_id, revision_id, kind, timestamp, level, message) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.db
      .transaction(() => {
        for (const entry of entries) {
          insert.run(entry.deployment_id, entry.revision_id, entry.kind, entry.timestamp, entry.level, entry.message);
        }
      })
      .immediate();
  }

  async query(filter: LogFilter): Promise<LogRecord[]> {
    const where = ["deployment_id = ?", "kind = ?"];
    const values: unknown[] = [filter.deployment_id, filter.kind];
    const add = (clause: string, value: unknown) => {
      where.push(clause);
      values.push(value);
    };
    if (filter.revision_id) add("revision_id = ?", filter.revision_id);
    if (filter.level) add("level = ?", filter.level);
    if (filter.query) add("instr(lower(message), lower(?)) > 0", filter.query);
    if (filter.start_time) add("timestamp >= ?", filter.start_time);
    if (filter.end_time) add("timestamp <= ?", filter.end_time);
    const order = filter.order === "asc" ? "ASC" : "DESC";
    return this.db
      .prepare(`SELECT * FROM deployment_logs WHERE ${where.join(" AND ")} ORDER BY id ${order} LIMIT ? OFFSET ?`)
      .all(...values, filter.limit, filter.offset) as LogRecord[];
  }
}
