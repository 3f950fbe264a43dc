import { NotFoundError } from "@berth/service-kit";
import { runWebhookSecretOf } from "../domain/run-webhooks.js";
import type { SecretBox } from "../domain/secret-box.js";
import type { ControlPlaneStorage } from "../storage/types.js";

/** The header a run webhook's signature is in (docs/agent-server.md#webhooks). */
const SIGNATURE_HEADER = "X-Berth-Signature";

/** What a deployment's owner verifies its run webhooks with. */
export class RunWebhookService {
  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly box: SecretBox,
  ) {}

  async signingOf(tenantId: string, deploymentId: string) {
    const deployment = await this.storage.deployments.get(tenantId, deploymentId);
    if (!deployment) throw new NotFoundError(`Deployment ${deploymentId} not found`);
    return {
      deployment_id: deployment.id,
      webhook_secret: runWebhookSecretOf(this.box, deployment.id),
      signature_header: SIGNATURE_HEADER,
    };
  }
}
