import type pg from "pg";
import type { UploadRecord, UploadStore } from "../types.js";
import { UPLOAD } from "../columns.js";

export class PostgresUploadStore implements UploadStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(upload: UploadRecord): Promise<void> {
    await this.pool.query(
      `INSERT INTO uploads (upload_id, object_path, deployment_id, tenant_id, created_at, expires_at, uploaded_at, size_bytes, sha256)
       VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL, NULL)`,
      [upload.upload_id, upload.object_path, upload.deployment_id, upload.tenant_id, upload.created_at, upload.expires_at],
    );
  }

  async getById(uploadId: string): Promise<UploadRecord | undefined> {
    const { rows } = await this.pool.query<UploadRecord>(`SELECT ${UPLOAD} FROM uploads WHERE upload_id = $1`, [uploadId]);
    return rows[0];
  }

  async getByPath(objectPath: string): Promise<UploadRecord | undefined> {
    const { rows } = await this.pool.query<UploadRecord>(`SELECT ${UPLOAD} FROM uploads WHERE object_path = $1`, [objectPath]);
    return rows[0];
  }

  async markUploaded(uploadId: string, sizeBytes: number, sha256: string, now: string): Promise<void> {
    await this.pool.query("UPDATE uploads SET uploaded_at = $1, size_bytes = $2, sha256 = $3 WHERE upload_id = $4", [
      now,
      sizeBytes,
      sha256,
      uploadId,
    ]);
  }

  async isUsed(objectPath: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "SELECT 1 FROM revisions WHERE source_revision_config->>'source_tarball_path' = $1 LIMIT 1",
      [objectPath],
    );
    return (rowCount ?? 0) > 0;
  }
}
