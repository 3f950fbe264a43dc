import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Encryption at rest of deployment secrets (AES-256-GCM) and the signing of
 * upload URLs (HMAC-SHA256 with a key derived from the same secret).
 * Ciphertext format: `v1.<iv>.<tag>.<data>`, base64url parts.
 */
export class SecretBox {
  private readonly encryptionKey: Buffer;
  private readonly signingKey: Buffer;

  constructor(masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error("the secrets key must be 32 bytes");
    this.encryptionKey = createHmac("sha256", masterKey).update("berth secrets encryption").digest();
    this.signingKey = createHmac("sha256", masterKey).update("berth upload signing").digest();
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.encryptionKey, iv);
    const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return ["v1", iv, cipher.getAuthTag(), data]
      .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
      .join(".");
  }

  decrypt(ciphertext: string): string {
    const [version, iv, tag, data] = ciphertext.split(".");
    if (version !== "v1" || iv === undefined || tag === undefined || data === undefined)
      throw new Error("unknown ciphertext format");
    const decipher = createDecipheriv("aes-256-gcm", this.encryptionKey, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8");
  }

  /** A secret derived from the master key for `label`: the same at every start, unguessable without the key. */
  derive(label: string): string {
    return createHmac("sha256", this.signingKey).update(`derive:${label}`).digest("base64url");
  }

  sign(message: string): string {
    return createHmac("sha256", this.signingKey).update(message).digest("base64url");
  }
}

/** The key from `BERTH_SECRETS_KEY` (base64 or hex), else from (or newly into) `file`. */
export function loadSecretsKey(configured: string | undefined, file: string): Buffer {
  if (configured) {
    const key = /^[0-9a-fA-F]{64}$/.test(configured) ? Buffer.from(configured, "hex") : Buffer.from(configured, "base64");
    if (key.length !== 32) throw new Error("BERTH_SECRETS_KEY must be 32 bytes, base64 or hex encoded");
    return key;
  }
  if (existsSync(file)) return Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  mkdirSync(dirname(file), { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  return key;
}
