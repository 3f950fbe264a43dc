import type { Logger } from "@berth/service-kit";
import { chmod, mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { DockerCompute } from "../compute/docker-compute.js";
import { LocalCompute } from "../compute/local-compute.js";
import type { SupervisedCompute, SupervisedComputeOptions } from "../compute/supervised-compute.js";
import { connectCluster } from "../compute/cluster/cluster-connection.js";
import { connectEngine } from "../engine/docker-engine.js";
import { Router } from "../router/router.js";
import { startIsolation } from "../sandbox/isolation.js";
import { withResourceLimits } from "../sandbox/limited-isolation.js";
import { ArtifactStore, removeSharedBuilds } from "./artifacts.js";
import { type AutoscaleSettings, Autoscaler, autoscaleSettings } from "./autoscaler.js";
import { BranchPoller, branchPollMs } from "./branch-poller.js";
import { connectClusterBuilds } from "./cluster-images.js";
import { ClusterLogs, clusterLogPollMs } from "./cluster-logs.js";
import { ClusterRollouts, type ClusterSettings } from "./cluster-rollouts.js";
import { DeploymentRunner, type RunnerContext } from "./deployment-runner.js";
import { ImageBuilds } from "./image-builds.js";
import { parseImageRegistry } from "./image-registry.js";
import type { Assignment } from "@berth/listener-protocol";
import type { ControlPlaneLink } from "./link.js";
import { LogShipper } from "./log-shipper.js";
import { ScaleOutServices } from "./scale-out.js";
import { SecretSource } from "./secret-source.js";
import { killOrphans, recordPid } from "./orphans.js";

export interface ListenerOptions {
  link: ControlPlaneLink;
  /** Builds, install cache and the deployments' databases. */
  dataDir: string;
  /** Where the stable URLs are served; publicUrl when clients reach them by another address. */
  router: { host: string; port: number; publicUrl?: string; authCacheMs?: number };
  logger: Logger;
  /** How often desired state is read (default 1000 ms). */
  pollMs?: number;
  drainTimeoutMs?: number;
  /**
   * Without a sandbox (see sandbox/probe.ts), run the deployments of every
   * workspace anyway, as the listener's own user. Off: only one workspace's.
   */
  trustAllCode?: boolean;
  /** Destinations sandboxed code may reach besides the internet (BERTH_SANDBOX_EGRESS_ALLOW, docs/security.md). */
  sandboxEgressAllow?: string;
  /**
   * Where revisions run: local processes (default), or containers through a
   * Docker Engine API at `engine` (default DOCKER_HOST, else the standard socket).
   */
  compute?:
    | { type: "local" }
    | { type: "docker"; engine?: string; bindAllowList?: string[] }
    | ({ type: "cluster"; kubeconfig?: string; context?: string; engine?: string } & ClusterSettings);
  /** A JSON file of the operator's secrets, for external images' secret_references and image_pull_secrets. */
  secretsFile?: string;
  /** How often tracked branches of build_on_push deployments are polled (default BERTH_REPO_POLL_SECONDS; 0: never). */
  branchPollMs?: number;
  /** How container deployments grow from min_scale toward max_scale (default: from the BERTH_AUTOSCALE_* variables). */
  autoscale?: AutoscaleSettings;
}

export interface RunningListener {
  /** Base URL of the router: a deployment's URL is `${routerUrl}/d/<deployment id>`. */
  routerUrl: string;
  /** Reads desired state now rather than at the next poll. */
  wake(): void;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);
const SERVER_VERSION = (require("@berth/agent-server/package.json") as { version: string }).version;

/**
 * A listener: reconciles the deployments the control plane assigns it into
 * local agent-server processes behind its router, and reports back. It only
 * ever calls the control plane (through `link`).
 */
export async function startListener(options: ListenerOptions): Promise<RunningListener> {
  const { link, logger } = options;
  // A wrong registry stops the listener before it starts anything.
  const imageRegistry =
    options.compute?.type === "cluster" && options.compute.imageRegistry
      ? parseImageRegistry(options.compute.imageRegistry)
      : undefined;
  const runners = new Map<string, DeploymentRunner>();
  const revisionOwners = new Map<string, string>();
  const deploymentTenants = new Map<string, string>();
  const dirs = {
    sources: join(options.dataDir, "sources"),
    installCache: join(options.dataDir, "install-cache"),
    deployments: join(options.dataDir, "deployments"),
    artifacts: join(options.dataDir, "artifacts"),
    gitCache: join(options.dataDir, "git-cache"),
  };
  // Builds, databases and caches of every deployment: the listener's alone (sandboxes get their parts bound in).
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  await chmod(options.dataDir, 0o700);
  const orphans = killOrphans(dirs.deployments);
  if (orphans > 0) logger.warn({ count: orphans }, "stopped agent servers left running by a previous listener");
  await removeSharedBuilds(dirs.artifacts, dirs.installCache);
  const sandboxes = await startIsolation({
    dataDir: options.dataDir,
    artifacts: dirs.artifacts,
    deployments: dirs.deployments,
    trustAllCode: options.trustAllCode ?? false,
    egressAllow: options.sandboxEgressAllow,
    tenantOf: (deploymentId) => deploymentTenants.get(deploymentId),
    logger,
  });
  // Containers and pods have the engine's limits; local processes get the kernel's.
  const limited =
    (options.compute?.type ?? "local") === "local"
      ? await withResourceLimits(sandboxes, { dataDir: options.dataDir, deploymentsDir: dirs.deployments, logger })
      : undefined;
  const isolation = limited ?? sandboxes;
  const logs = new LogShipper(link, (err) => logger.warn({ err }, "shipping logs to the control plane failed; retrying"));

  const router = new Router({
    host: options.router.host,
    port: options.router.port,
    authorize: (deploymentId, apiKey) => link.authorize(deploymentId, apiKey),
    cacheTtlMs: options.router.authCacheMs,
    publicUrl: options.router.publicUrl,
    logger,
  });
  const routerUrl = await router.listen();

  const computeOptions: SupervisedComputeOptions = {
    log: (entry) => {
      const deploymentId = revisionOwners.get(entry.revisionId);
      if (deploymentId) logs.writer(deploymentId, entry.revisionId, "deploy")(entry);
    },
    onEvent: (event) => {
      const line = logs.writer(event.deploymentId, event.revisionId, "deploy");
      line({ level: event.kind === "restarted" ? "warn" : "error", message: event.message });
      logger.warn({ deployment_id: event.deploymentId, revision_id: event.revisionId, kind: event.kind }, event.message);
      const instances = runners.get(event.deploymentId)?.activeInstances() ?? [];
      if (!instances.some((instance) => instance.revisionId === event.revisionId)) return;
      if (event.kind === "restarted") {
        router.setTargets(
          event.deploymentId,
          instances.map((instance) => instance.url),
        );
        for (const instance of instances) void recordPid(join(context.dirs.deployments, event.deploymentId), instance.pid);
      }
      // The serving revision stays DEPLOYED; the step goes into its timeline with the reason.
      void link
        .transition(event.revisionId, ["DEPLOYED"], "DEPLOYED", event.message)
        .then(() => link.report(event.deploymentId, { status: event.kind === "restarted" ? "READY" : "UNKNOWN" }))
        .catch((err: unknown) => logger.warn({ err }, "reporting a deployment's status failed"));
    },
  };
  let compute: SupervisedCompute;
  let images: ImageBuilds | undefined;
  let scaleOut: ScaleOutServices | undefined;
  if (options.compute?.type === "docker") {
    const engine = await connectEngine(options.compute.engine);
    const docker = new DockerCompute(engine, options.dataDir, {
      ...computeOptions,
      bindAllowList: options.compute.bindAllowList,
    });
    const leftovers = await docker.removeLeftovers();
    if (leftovers > 0) logger.warn({ count: leftovers }, "removed containers left running by a previous listener");
    compute = docker;
    images = new ImageBuilds(engine, join(options.dataDir, "image-builds"));
    scaleOut = new ScaleOutServices(engine, dirs.deployments);
    logger.info({ engine: engine.address }, "running revisions as containers");
    if (engine.firewallOff)
      logger.warn(
        { reason: engine.firewallOff },
        "containers get networks of their own, but no host firewall rules: they can reach the host's services and private ranges (docs/containers.md)",
      );
  } else {
    compute = new LocalCompute({ ...computeOptions, sandbox: isolation.server });
  }
  const secrets = new SecretSource(options.secretsFile);
  // A cluster listener builds sources into images as a docker listener does, and pushes them to --image-registry.
  const clusterBuilds =
    options.compute?.type === "cluster"
      ? await connectClusterBuilds(imageRegistry, options.compute.engine, join(options.dataDir, "image-builds"), secrets, logger)
      : undefined;

  const clusterConnection =
    options.compute?.type === "cluster"
      ? connectCluster({ kubeconfig: options.compute.kubeconfig, context: options.compute.context })
      : undefined;
  const context: RunnerContext = {
    link,
    compute,
    resources: limited,
    images: images ?? clusterBuilds?.images,
    scaleOut,
    cluster: clusterConnection
      ? new ClusterRollouts(
          clusterConnection,
          options.compute as ClusterSettings,
          dirs.deployments,
          new ClusterLogs(clusterConnection, logs, logger, clusterLogPollMs()),
        )
      : undefined,
    clusterImages: clusterBuilds?.clusterImages,
    secrets,
    router,
    artifacts: new ArtifactStore(dirs.artifacts, {
      isolation,
      ownerOf: (revisionId) => {
        const deploymentId = revisionOwners.get(revisionId);
        const tenantId = deploymentId && deploymentTenants.get(deploymentId);
        return deploymentId && tenantId ? { deploymentId, tenantId } : undefined;
      },
    }),
    logs,
    logger,
    dirs: { sources: dirs.sources, installCache: dirs.installCache, deployments: dirs.deployments, gitCache: dirs.gitCache },
    drainTimeoutMs: options.drainTimeoutMs ?? 60_000,
    serverVersion: SERVER_VERSION,
  };

  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let passing: Promise<void> | undefined;
  let again = false;

  let known: Assignment[] = [];
  const pass = async () => {
    const assignments = await link.assignments();
    known = assignments;
    for (const assignment of assignments) {
      let runner = runners.get(assignment.id);
      if (!runner) runners.set(assignment.id, (runner = new DeploymentRunner(assignment.id, context)));
      deploymentTenants.set(assignment.id, assignment.tenant_id);
      for (const revision of [assignment.latest, assignment.active]) if (revision) revisionOwners.set(revision.id, assignment.id);
      runner.reconcile(assignment);
    }
    const assigned = new Set(assignments.map((assignment) => assignment.id));
    for (const [id, runner] of runners) {
      if (assigned.has(id)) continue; // purged, or moved to another listener
      runners.delete(id);
      await runner.stop();
      await context.artifacts.forget(id);
      deploymentTenants.delete(id);
    }
  };

  /** One pass at a time; a wake during a pass makes another right after. */
  const reconcile = () => {
    if (closed) return;
    if (passing) return void (again = true);
    clearTimeout(timer);
    passing = pass()
      .catch((err: unknown) => logger.warn({ err }, "reconciling failed; trying again"))
      .finally(() => {
        passing = undefined;
        if (closed) return;
        if (again) {
          again = false;
          return reconcile();
        }
        timer = setTimeout(reconcile, options.pollMs ?? 1000);
      });
  };
  reconcile();
  // Only containers scale: a local listener runs one process per deployment.
  const autoscaler = images
    ? new Autoscaler(options.autoscale ?? autoscaleSettings(), () => runners.values(), logger)
    : undefined;
  autoscaler?.start();
  const poller = new BranchPoller(options.branchPollMs ?? branchPollMs(), link, () => known, logger);
  poller.start();
  logger.info({ router_url: routerUrl }, "listener started");

  return {
    routerUrl,
    wake: reconcile,
    async close() {
      closed = true;
      clearTimeout(timer);
      autoscaler?.stop();
      await context.cluster?.podLogs?.stop();
      await poller.stop();
      await passing;
      await Promise.all([...runners.values()].map((runner) => runner.stop()));
      await compute.stopAll();
      await logs.close();
      await router.close();
      await isolation.close();
    },
  };
}
