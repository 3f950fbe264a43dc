import type { SecretBox } from "../domain/secret-box.js";
import type { ControlPlaneStorage } from "../storage/types.js";
import { DeploymentService } from "./deployments.js";
import { IntegrationService } from "./integrations.js";

/** The integrations of any workspace, for an administrator's command line on the control plane's own state. */
export function integrationAdmin(storage: ControlPlaneStorage, box: SecretBox): IntegrationService {
  return new IntegrationService(storage, box, new DeploymentService(storage, box));
}
