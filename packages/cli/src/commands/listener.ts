import { HttpLink, renderForReview, startListener } from "@berth/listener";
import { createServiceLogger, envBoolean, envNumber, envOneOf } from "@berth/service-kit";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { closeOnSignals, parsedOrError, parsePort } from "../process.js";

/** `berth listener`: a listener on its own machine, talking to the control plane over HTTP. */
export async function listenerCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({
      args: argv,
      options: {
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
      },
    }),
  );
  if (parsed instanceof Error) return fail(parsed.message);
  const { values } = parsed;
  const controlPlaneUrl = values["control-plane"] ?? process.env.BERTH_CONTROL_PLANE_URL;
  const apiKey = values["api-key"] ?? process.env.BERTH_LISTENER_API_KEY;
  const listenerId = values["listener-id"];
  if (!controlPlaneUrl || !apiKey || !listenerId) return fail("needs --control-plane, --api-key and --listener-id");
  const routerPort = parsePort(values["router-port"]);
  if (routerPort === undefined) return fail("--router-port must be a port number");
  const link = new HttpLink({ controlPlaneUrl, apiKey, listenerId, tenantId: values.tenant });
  const dataDir = values["data-dir"] ?? join(process.cwd(), ".berth", "listener");
  const cluster = {
    namespace: values["cluster-namespace"] ?? process.env.BERTH_CLUSTER_NAMESPACE ?? "default",
    keda: values.keda || envBoolean("BERTH_CLUSTER_KEDA", false),
    rolloutTimeoutMs: envNumber("BERTH_CLUSTER_ROLLOUT_SECONDS", 600, { min: 1 }) * 1000,
    servicesImage: process.env.BERTH_CLUSTER_SERVICES_IMAGE || undefined,
    // Where built sources' images are pushed for the cluster to pull (docs/cluster.md).
    imageRegistry: values["image-registry"] ?? (process.env.BERTH_CLUSTER_IMAGE_REGISTRY || undefined),
  };
  if (values.render) {
    try {
      process.stdout.write(await renderForReview(link, values.render, cluster, join(dataDir, "deployments")));
      return 0;
    } catch (error) {
      return fail(`--render: ${(error as Error).message}`);
    }
  }
  const asked =
    values.compute ??
    (process.env.BERTH_LISTENER_COMPUTE
      ? envOneOf("BERTH_LISTENER_COMPUTE", ["local", "docker", "cluster"] as const, "local")
      : undefined);
  // Without --compute, the listener's record says what it runs on (so the control plane must answer at start).
  let compute = asked;
  if (compute === undefined) {
    try {
      compute = await link.computeType();
    } catch (error) {
      return fail(`reading listener ${listenerId}'s compute_type failed (or pass --compute): ${(error as Error).message}`);
    }
  }
  if (compute !== "local" && compute !== "docker" && compute !== "cluster")
    return fail(`compute_type ${compute} is not supported by this listener (local, docker and cluster are)`);
  const engine = values.engine ?? (process.env.BERTH_CONTAINER_ENGINE || undefined);
  const logger = createServiceLogger("listener");
  closeOnSignals(
    await startListener({
      link,
      dataDir,
      router: {
        host: values["router-host"],
        port: routerPort,
        publicUrl: values["router-public-url"] ?? process.env.BERTH_ROUTER_PUBLIC_URL,
      },
      logger,
      // Without a sandbox, run every workspace's code anyway (docs/security.md).
      trustAllCode: values["trust-all-code"] || envBoolean("BERTH_TRUST_ALL_CODE", false),
      sandboxEgressAllow: process.env.BERTH_SANDBOX_EGRESS_ALLOW || undefined,
      compute:
        compute === "cluster"
          ? {
              type: "cluster",
              kubeconfig: values.kubeconfig ?? (process.env.KUBECONFIG || undefined),
              context: values["kube-context"],
              // What builds internal_source and repo_host revisions before they are pushed to the image registry.
              engine,
              ...cluster,
            }
          : compute === "docker"
            ? {
                type: "docker",
                engine,
                bindAllowList: (process.env.BERTH_CONTAINER_BIND_ALLOW ?? "")
                  .split(",")
                  .map((f) => f.trim())
                  .filter(Boolean),
              }
            : { type: "local" },
      secretsFile: process.env.BERTH_LISTENER_SECRETS_FILE || undefined,
    }),
  );
  return 0;
}

function fail(message: string): number {
  process.stderr.write(`berth listener: ${message}\n`);
  return 2;
}
