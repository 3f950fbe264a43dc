import { BadRequestError } from "@berth/service-kit";
import type { DeploymentSource } from "../model/statuses.js";

/**
 * `POST /v2/deployments/{id}/push-token`: the official CLI's local build asks
 * for a short-lived token to push its image to the platform's registry. Berth
 * has no registry and no listener that runs images yet, so it refuses with the
 * reason instead of a route miss. The first message is the hosted platform's
 * wording on purpose: the CLI recognises it and tells the user the deployment
 * was not made by a local build.
 */
export function refusePushToken(source: DeploymentSource): never {
  if (source !== "internal_image") {
    throw new BadRequestError(
      `push-token is only available for 'internal_docker' source deployments (internal_image in the spec's names), not ${source}`,
    );
  }
  throw new BadRequestError(
    "Push tokens need an image registry and a listener with container compute, neither of which this control plane has yet: " +
      "an image built locally cannot be deployed. Deploy the source instead (`langgraphjs deploy --remote`): " +
      "the control plane's listener builds it.",
  );
}
