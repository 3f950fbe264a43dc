import type { SecretBox } from "../domain/secret-box.js";
import type { ControlPlaneStorage } from "../storage/types.js";
import { DeploymentService } from "./deployments.js";
import { IntegrationService } from "./integrations.js";
import { ListenerService } from "./listeners.js";
import { RevisionService } from "./revisions.js";
import { UploadService, type UploadSettings } from "./uploads.js";

export interface Services {
  deployments: DeploymentService;
  revisions: RevisionService;
  uploads: UploadService;
  listeners: ListenerService;
  integrations: IntegrationService;
}

export function createServices(storage: ControlPlaneStorage, box: SecretBox, uploads: UploadSettings): Services {
  return {
    deployments: new DeploymentService(storage, box),
    revisions: new RevisionService(storage),
    uploads: new UploadService(storage, box, uploads),
    listeners: new ListenerService(storage),
    integrations: new IntegrationService(storage),
  };
}
