import type { SecretBox } from "./secret-box.js";

/**
 * The secret a deployment's agent servers sign their run webhooks with
 * (their BERTH_WEBHOOK_SECRET): one per deployment, derived from the
 * control plane's secrets key, so it needs no storage of its own and every
 * listener, local, container or cluster, gets the same one with the
 * deployment's assignment.
 */
export function runWebhookSecretOf(box: SecretBox, deploymentId: string): string {
  return box.derive(`run-webhooks:${deploymentId}`);
}
