import { lookup } from "node:dns/promises";
import type { ContainerEngine } from "../../engine/docker-engine.js";
import type { Endpoint } from "../../engine/host-firewall.js";
import { ensureIsolatedNetwork, removeIsolatedNetwork } from "../../engine/isolated-network.js";

/** The network of a deployment's containers (servers, init containers, its PostgreSQL and Redis), kept across revisions. */
export function deploymentNetworkOf(deploymentId: string): string {
  return `berth-${deploymentId}`;
}

/**
 * Makes sure the deployment's network exists, isolated: its containers reach
 * each other and the internet, not other deployments, the host, nor private
 * ranges (engine/isolated-network.ts), but for `allowed` (see
 * controlPlaneEndpointsOf; left out, the exceptions the network has).
 */
export async function ensureDeploymentNetwork(
  engine: ContainerEngine,
  deploymentId: string,
  allowed?: readonly Endpoint[],
): Promise<string> {
  const network = deploymentNetworkOf(deploymentId);
  await ensureIsolatedNetwork(engine, network, {
    labels: { "berth.managed": "network", "berth.deployment": deploymentId },
    interContainer: true,
    allowed,
  });
  return network;
}

/**
 * The control plane's tracing API and Auth Service, as a server's environment
 * names them (LANGSMITH_ENDPOINT, BERTH_AUTH_SERVICE_URL): the addresses and
 * port its containers may reach even on the host or in a private range.
 * Loopback addresses are left out (a container's loopback is its own).
 */
export async function controlPlaneEndpointsOf(env: Record<string, string>): Promise<Endpoint[]> {
  const endpoints = new Map<string, Endpoint>();
  for (const value of [env.LANGSMITH_ENDPOINT, env.BERTH_AUTH_SERVICE_URL]) {
    if (!value || !URL.canParse(value)) continue;
    const url = new URL(value);
    const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
    const addresses = await lookup(url.hostname.replace(/^\[|\]$/g, ""), { all: true, family: 4 }).catch(() => []);
    for (const { address } of addresses) if (!address.startsWith("127.")) endpoints.set(`${address}:${port}`, { address, port });
  }
  return [...endpoints.values()].sort((a, b) => `${a.address}:${a.port}`.localeCompare(`${b.address}:${b.port}`));
}

/** Removes the deployment's network and its firewall rules (once its containers are gone). */
export function removeDeploymentNetwork(engine: ContainerEngine, deploymentId: string): Promise<void> {
  return removeIsolatedNetwork(engine, deploymentNetworkOf(deploymentId));
}
