import { useSession } from "../api/context";
import { type DeploymentEndpoint, deploymentEndpoint, loadRouterUrls } from "../api/platform";
import type { Deployment } from "../api/types";
import { usePolling } from "./usePolling";

export interface DeploymentAndEndpoint {
  deployment?: Deployment;
  /** Where the page reaches the deployment's agent server (api/platform.ts). */
  endpoint?: DeploymentEndpoint;
  error?: string;
}

/**
 * A deployment and the URL its agent server is reached at, for the pages that talk to it (Conversations, Studio).
 * Read once: a deployment's URL does not change, nor do the platform's routers.
 */
export function useDeploymentEndpoint(id: string): DeploymentAndEndpoint {
  const { api } = useSession();
  const { data, error } = usePolling(
    async () => {
      const [deployment, routerUrls] = await Promise.all([api.get<Deployment>(`v2/deployments/${id}`), loadRouterUrls()]);
      return { deployment, endpoint: deploymentEndpoint(deployment, routerUrls) };
    },
    null,
    [api, id],
  );
  return { deployment: data?.deployment, endpoint: data?.endpoint, error };
}
