import {
  type CommandSettings,
  clusterNetworkFromEnv,
  clusterSettings,
  commandSettings,
  HttpLink,
  type ListenerOptions,
  renderForReview,
  startListener,
} from "@berth/listener";
import { createServiceLogger } from "@berth/service-kit";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { closeOnSignals, parsedOrError, parsePort } from "../process.js";

const OPTIONS = {
  "control-plane": { type: "string" },
  "api-key": { type: "string" },
  "listener-id": { type: "string" },
  tenant: { type: "string" },
  "data-dir": { type: "string" },
  "router-host": { type: "string", default: "127.0.0.1" },
  "router-port": { type: "string", default: "8080" },
  "router-public-url": { type: "string" },
  "trust-all-code": { type: "boolean" },
  compute: { type: "string" },
  engine: { type: "string" },
  kubeconfig: { type: "string" },
  "kube-context": { type: "string" },
  "cluster-namespace": { type: "string" },
  keda: { type: "boolean" },
  "image-registry": { type: "string" },
  render: { type: "string" },
} as const;

type Flags = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>["values"];

/** `berth listener`: a listener on its own machine, talking to the control plane over HTTP. */
export async function listenerCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() => ({ flags: parseArgs({ args: argv, options: OPTIONS }).values, env: commandSettings() }));
  if (parsed instanceof Error) return fail(parsed.message);
  const { flags, env } = parsed;
  const controlPlaneUrl = flags["control-plane"] ?? env.controlPlaneUrl;
  const apiKey = flags["api-key"] ?? env.apiKey;
  const listenerId = flags["listener-id"];
  if (!controlPlaneUrl || !apiKey || !listenerId) return fail("needs --control-plane, --api-key and --listener-id");
  const routerPort = parsePort(flags["router-port"]);
  if (routerPort === undefined) return fail("--router-port must be a port number");
  const link = new HttpLink({ controlPlaneUrl, apiKey, listenerId, tenantId: flags.tenant });
  const dataDir = flags["data-dir"] ?? join(process.cwd(), ".berth", "listener");
  const cluster = parsedOrError(() => clusterOf(flags, env));
  if (cluster instanceof Error) return fail(cluster.message);
  if (flags.render) {
    try {
      const settings = { ...cluster, network: clusterNetworkFromEnv() };
      process.stdout.write(await renderForReview(link, flags.render, settings, join(dataDir, "deployments")));
      return 0;
    } catch (error) {
      return fail(`--render: ${(error as Error).message}`);
    }
  }
  // Without --compute, the listener's record says what it runs on (so the control plane must answer at start).
  let compute = flags.compute ?? env.compute;
  try {
    compute ??= await link.computeType();
  } catch (error) {
    return fail(`reading listener ${listenerId}'s compute_type failed (or pass --compute): ${(error as Error).message}`);
  }
  if (compute !== "local" && compute !== "docker" && compute !== "cluster")
    return fail(`compute_type ${compute} is not supported by this listener (local, docker and cluster are)`);
  const listener = await startListener({
    link,
    dataDir,
    router: { host: flags["router-host"], port: routerPort, publicUrl: flags["router-public-url"] ?? env.routerPublicUrl },
    logger: createServiceLogger("listener"),
    // Without a sandbox, run every workspace's code anyway (docs/security.md).
    trustAllCode: flags["trust-all-code"] || env.trustAllCode,
    sandboxEgressAllow: env.sandboxEgressAllow,
    compute: placementOf(compute, flags, env, cluster),
    secretsFile: env.secretsFile,
  });
  closeOnSignals(listener);
  return 0;
}

/** A cluster listener's settings: the flags over the environment's (docs/cluster.md). */
function clusterOf(flags: Flags, env: CommandSettings) {
  const fromEnv = clusterSettings();
  return {
    ...fromEnv,
    namespace: flags["cluster-namespace"] ?? fromEnv.namespace,
    keda: flags.keda || fromEnv.keda,
    imageRegistry: flags["image-registry"] ?? fromEnv.imageRegistry,
    kubeconfig: flags.kubeconfig ?? env.kubeconfig,
    context: flags["kube-context"],
  };
}

/** Where the listener runs revisions, with that placement's settings. */
function placementOf(
  type: "local" | "docker" | "cluster",
  flags: Flags,
  env: CommandSettings,
  cluster: ReturnType<typeof clusterOf>,
): ListenerOptions["compute"] {
  const engine = flags.engine ?? env.containerEngine;
  if (type === "cluster") return { type, engine, ...cluster, network: clusterNetworkFromEnv() };
  if (type === "docker") return { type, engine, bindAllowList: env.containerBindAllow };
  return { type };
}

function fail(message: string): number {
  process.stderr.write(`berth listener: ${message}\n`);
  return 2;
}
