import { createHmac } from "node:crypto";

/**
 * The signature headers of a delivery: `X-Berth-Timestamp: <unix seconds>`
 * and `X-Berth-Signature: t=<same seconds>,v1=<hex HMAC-SHA256 of
 * "<seconds>.<body>" keyed with the secret>`. The timestamp is signed so a
 * receiver can refuse replays of old deliveries.
 */
export function signatureHeaders(secret: string, body: string, sentAt: Date): Record<string, string> {
  const seconds = Math.floor(sentAt.getTime() / 1000);
  const digest = createHmac("sha256", secret).update(`${seconds}.${body}`).digest("hex");
  return { "x-berth-timestamp": String(seconds), "x-berth-signature": `t=${seconds},v1=${digest}` };
}
