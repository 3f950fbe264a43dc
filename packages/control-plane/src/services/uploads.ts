import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, PayloadTooLargeError } from "@berth/service-kit";
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { SecretBox } from "../domain/secret-box.js";
import type { ControlPlaneStorage } from "../storage/types.js";

export interface UploadSettings {
  /** Where tarballs are kept: `<dir>/<object path>`. */
  dir: string;
  ttlSeconds: number;
  maxBytes: number;
}

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/**
 * Signed, expiring upload URLs for source tarballs (the upload-url flow):
 * the URL is the credential, so the PUT needs no API key.
 */
export class UploadService {
  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly box: SecretBox,
    private readonly settings: UploadSettings,
  ) {}

  async issue(tenantId: string, deploymentId: string, baseUrl: string) {
    const deployment = await this.storage.deployments.get(tenantId, deploymentId);
    if (!deployment) throw new NotFoundError(`Deployment ${deploymentId} not found`);
    if (deployment.source !== "internal_source") {
      throw new BadRequestError(`upload-url is only available for internal_source deployments, not ${deployment.source}`);
    }
    const uploadId = randomUUID();
    const objectPath = `deployments/${deploymentId}/sources/${uploadId}.tar.gz`;
    const expires = Math.floor(Date.now() / 1000) + this.settings.ttlSeconds;
    const now = new Date().toISOString();
    await this.storage.uploads.create({
      upload_id: uploadId,
      object_path: objectPath,
      deployment_id: deploymentId,
      tenant_id: tenantId,
      created_at: now,
      expires_at: new Date(expires * 1000).toISOString(),
      uploaded_at: null,
      size_bytes: null,
      sha256: null,
    });
    const signature = this.box.sign(`${uploadId}.${expires}`);
    return {
      upload_url: `${baseUrl}/v2/uploads/${uploadId}?expires=${expires}&signature=${signature}`,
      object_path: objectPath,
      expires_at: new Date(expires * 1000).toISOString(),
    };
  }

  /** Stores the body of a PUT to a signed URL; the previous tarball of the same path is replaced. */
  async receive(uploadId: string, expires: string, signature: string, body: Readable, declaredLength: number | undefined) {
    const expected = Buffer.from(this.box.sign(`${uploadId}.${expires}`));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new ForbiddenError("Invalid upload signature");
    if (!(Number(expires) * 1000 > Date.now())) throw new ForbiddenError("Upload URL expired");
    const upload = await this.storage.uploads.getById(uploadId);
    if (!upload) throw new NotFoundError(`Upload ${uploadId} not found`);
    if (await this.storage.uploads.isUsed(upload.object_path)) {
      throw new ConflictError(`${upload.object_path} is already deployed by a revision; request a new upload URL`);
    }
    if (declaredLength !== undefined && declaredLength > this.settings.maxBytes) throw this.tooLarge();

    const file = join(this.settings.dir, upload.object_path);
    const partial = `${file}.${randomUUID()}.partial`;
    await mkdir(dirname(file), { recursive: true });
    const hash = createHash("sha256");
    let size = 0;
    let head = Buffer.alloc(0);
    const meter = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        size += chunk.length;
        if (size > this.settings.maxBytes) return done(this.tooLarge());
        if (head.length < 2) head = Buffer.concat([head, chunk.subarray(0, 2 - head.length)]);
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(body, meter, createWriteStream(partial));
      if (!head.equals(GZIP_MAGIC))
        throw new BadRequestError("The upload is not a gzip file (expected a .tar.gz source tarball)");
      await rename(partial, file);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    const sha256 = hash.digest("hex");
    await this.storage.uploads.markUploaded(uploadId, size, sha256, new Date().toISOString());
    return { object_path: upload.object_path, size_bytes: size, sha256 };
  }

  private tooLarge() {
    return new PayloadTooLargeError(`The upload exceeds the limit of ${this.settings.maxBytes} bytes`);
  }
}
