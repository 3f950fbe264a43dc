import type { IntegrationCreateInput } from "../domain/inputs/integration.js";
import type { SecretBox } from "../domain/secret-box.js";
import type { ControlPlaneStorage } from "../storage/types.js";
import { InProcessChangeFeed } from "./change-feed.js";
import { DeploymentService } from "./deployments.js";
import { IntegrationService } from "./integrations.js";

/**
 * The integrations of any workspace, for an administrator's command line on
 * the control plane's own state. Whoever runs it is the platform's operator:
 * it may make local integrations, under BERTH_LOCAL_GIT_ROOTS when it lists
 * folders, anywhere when it lists none.
 */
export function integrationAdmin(storage: ControlPlaneStorage, box: SecretBox, localGitRoots: readonly string[]) {
  const service = new IntegrationService(
    storage,
    box,
    // Making integrations changes no deployment: nobody follows these changes.
    new DeploymentService(storage, box, new InProcessChangeFeed()),
    localGitRoots.length > 0 ? localGitRoots : "anywhere",
  );
  return {
    create: (tenantId: string, input: IntegrationCreateInput) => service.create(tenantId, input, { operator: true }),
    list: (tenantId: string) => service.list(tenantId),
    repos: (tenantId: string, id: string) => service.repos(tenantId, id),
  };
}
