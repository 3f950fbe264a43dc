import type { ContainerEngine } from "../../engine/docker-engine.js";
import { ensureIsolatedNetwork, removeIsolatedNetwork } from "../../engine/isolated-network.js";

/** The network of a deployment's containers (servers, init containers, its PostgreSQL and Redis), kept across revisions. */
export function deploymentNetworkOf(deploymentId: string): string {
  return `berth-${deploymentId}`;
}

/**
 * Makes sure the deployment's network exists, isolated: its containers reach
 * each other and the internet, not other deployments, the host, nor private
 * ranges (engine/isolated-network.ts).
 */
export async function ensureDeploymentNetwork(engine: ContainerEngine, deploymentId: string): Promise<string> {
  const network = deploymentNetworkOf(deploymentId);
  await ensureIsolatedNetwork(engine, network, {
    labels: { "berth.managed": "network", "berth.deployment": deploymentId },
    interContainer: true,
  });
  return network;
}

/** Removes the deployment's network and its firewall rules (once its containers are gone). */
export function removeDeploymentNetwork(engine: ContainerEngine, deploymentId: string): Promise<void> {
  return removeIsolatedNetwork(engine, deploymentNetworkOf(deploymentId));
}
