import { createHash } from "node:crypto";
import type Docker from "dockerode";
import type { Endpoint, HostFirewall } from "./host-firewall.js";

/** What a network is made with: the engine (docker-engine.ts's ContainerEngine) and its host firewall. */
interface NetworkEngine {
  readonly docker: Docker;
  readonly address: string;
  readonly firewall?: HostFirewall;
}

export interface IsolatedNetworkOptions {
  labels: Record<string, string>;
  /** Its containers may talk to each other (a deployment's replicas and its database); image builds may not. */
  interContainer: boolean;
  /**
   * Services on the host or in private ranges its containers may reach (the control plane's). Left out, the
   * network keeps the exceptions it has (none when new).
   */
  allowed?: readonly Endpoint[];
}

/** The network image builds run their steps in (each build's containers alone on it). */
export const BUILD_NETWORK = "berth-builds";

/**
 * The host interface of a Berth network: named by Berth (at most 15
 * characters, from the engine's address and the network's name, so two
 * engines of one host never pick the same), so the host's firewall rules
 * can be written for it before the engine brings it up.
 */
function bridgeNameOf(engineAddress: string, network: string): string {
  return `bb-${createHash("sha256").update(`${engineAddress} ${network}`).digest("hex").slice(0, 12)}`;
}

/**
 * Makes sure the bridge network `name` exists, of its own interface, with
 * outbound NAT (the internet is reachable) and ports published on 127.0.0.1
 * by default; then, when the engine has a firewall, that its containers
 * cannot reach the host nor private ranges but for `allowed`
 * (engine/host-firewall.ts). The rules are installed once per network and
 * listener process, and again when `allowed` changes.
 */
export async function ensureIsolatedNetwork(engine: NetworkEngine, name: string, options: IsolatedNetworkOptions): Promise<void> {
  let network = await inspectNetwork(engine.docker, name);
  if (!network) {
    try {
      await engine.docker.createNetwork({
        Name: name,
        Driver: "bridge",
        CheckDuplicate: true,
        Labels: options.labels,
        Options: {
          "com.docker.network.bridge.name": bridgeNameOf(engine.address, name),
          "com.docker.network.bridge.enable_icc": String(options.interContainer),
          "com.docker.network.bridge.enable_ip_masquerade": "true",
          "com.docker.network.bridge.host_binding_ipv4": "127.0.0.1",
        },
      });
    } catch (error) {
      // Another start of the same deployment made it meanwhile.
      if ((error as { statusCode?: number }).statusCode !== 409) throw error;
    }
    network = await inspectNetwork(engine.docker, name);
    if (!network) throw new Error(`The engine did not create the network ${name}`);
  }
  const firewall = engine.firewall;
  if (!firewall) return;
  if (!isolated.has(engine)) isolated.set(engine, new Map());
  const installed = isolated.get(engine)!;
  const current = installed.get(network.Id);
  const allowed = options.allowed ?? current ?? [];
  if (current && JSON.stringify(current) === JSON.stringify(allowed)) return;
  await firewall.isolate(await interfaceOf(engine.docker, network), network.IPAM?.Config?.[0]?.Gateway, allowed);
  installed.set(network.Id, allowed);
}

/** Removes the network (quietly when it is gone) and its firewall rules; rejects while a container is still on it. */
export async function removeIsolatedNetwork(engine: NetworkEngine, name: string): Promise<void> {
  const network = await inspectNetwork(engine.docker, name);
  if (!network) return;
  // Asked while the engine still has the network (podman's tells its interface only then).
  const bridge = engine.firewall && (await interfaceOf(engine.docker, network));
  try {
    await engine.docker.getNetwork(network.Id).remove();
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error;
  }
  isolated.get(engine)?.delete(network.Id);
  if (bridge) await engine.firewall?.release(bridge);
}

/** Networks whose rules this process installed, with their exceptions, per engine. */
const isolated = new WeakMap<NetworkEngine, Map<string, readonly Endpoint[]>>();

async function inspectNetwork(docker: Docker, name: string): Promise<Docker.NetworkInspectInfo | undefined> {
  try {
    return (await docker.getNetwork(name).inspect()) as Docker.NetworkInspectInfo;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return undefined;
    throw error;
  }
}

/**
 * The bridge's interface: Berth names it on Docker Engine; podman's engine
 * (before 5) does not take the name through the Docker API and tells its own
 * in its libpod API; a network made before Berth named it has Docker's default name.
 */
async function interfaceOf(docker: Docker, network: Docker.NetworkInspectInfo): Promise<string> {
  const named = network.Options?.["com.docker.network.bridge.name"];
  if (named) return named;
  const libpod = await new Promise<{ network_interface?: string } | undefined>((resolve) =>
    docker.modem.dial(
      {
        path: `/v4.0.0/libpod/networks/${encodeURIComponent(network.Name)}/json`,
        method: "GET",
        statusCodes: { 200: true, 404: "not podman", 500: "server error" },
      },
      (error: Error | null, data: unknown) => resolve(error ? undefined : (data as { network_interface?: string })),
    ),
  );
  return libpod?.network_interface ?? `br-${network.Id.slice(0, 12)}`;
}
