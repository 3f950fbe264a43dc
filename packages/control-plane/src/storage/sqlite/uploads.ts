import type { SqliteDatabase } from "@berth/service-kit";
import { UPLOAD } from "../columns.js";
import type { UploadRecord, UploadStore } from "../types.js";

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
    return this.db.prepare(`SELECT ${UPLOAD} FROM uploads WHERE upload_id = ?`).get(uploadId) as UploadRecord | undefined;
  }

  async getByPath(objectPath: string): Promise<UploadRecord | undefined> {
    return this.db.prepare(`SELECT ${UPLOAD} FROM uploads WHERE object_path = ?`).get(objectPath) as UploadRecord | undefined;
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
