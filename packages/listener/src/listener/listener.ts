import type { Logger } from "@berth/service-kit";
import { Lifecycle } from "@berth/service-kit";
import { chmod, mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Router } from "../router/router.js";
import { removeSharedBuilds } from "./artifacts.js";
import type { AutoscaleSettings } from "./autoscaler.js";
import { BranchPoller } from "./branch-poller.js";
import { DeploymentRunner } from "./deployment-runner.js";
import { IdleSleeper } from "./idle-sleeper.js";
import type { ControlPlaneLink } from "./link.js";
import { LogShipper } from "./log-shipper.js";
import { MetricsPusher } from "./metrics-pusher.js";
import { killOrphans } from "./orphans.js";
import { type ClusterPlacementOptions, startClusterPlacement } from "./placements/cluster/cluster-placement.js";
import { startContainerPlacement } from "./placements/container/container-placement.js";
import { startLocalPlacement } from "./placements/local/local-placement.js";
import type { Placement } from "./placements/placement.js";
import type { ListenerDirs, PlacementContext } from "./placements/placement-context.js";
import { DeploymentOwners, ReconcileLoop } from "./reconcile-loop.js";
import { SecretSource } from "./secret-source.js";
import {
  autoscaleSettings,
  branchPollMs,
  clusterLogPollMs,
  idleSleepMs,
  metricsIntervalMs,
  sandboxForcedUnavailable,
} from "./settings.js";

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
   * Docker Engine API at `engine` (default DOCKER_HOST, else the standard socket), or a cluster.
   */
  compute?:
    | { type: "local" }
    | { type: "docker"; engine?: string; bindAllowList?: string[] }
    | ({ type: "cluster"; logPollMs?: number } & Omit<ClusterPlacementOptions, "logPollMs">);
  /** A JSON file of the operator's secrets, for external images' secret_references and image_pull_secrets. */
  secretsFile?: string;
  /** How often tracked branches of build_on_push deployments are polled (default BERTH_REPO_POLL_SECONDS; 0: never). */
  branchPollMs?: number;
  /** How container deployments grow from min_scale toward max_scale (default: from the BERTH_AUTOSCALE_* variables). */
  autoscale?: AutoscaleSettings;
  /** How often the deployments' servers' metrics are read and sent (default BERTH_METRICS_INTERVAL_SECONDS). */
  metricsIntervalMs?: number;
  /** How long a deployment on local compute (not prod) goes without a request before it sleeps (default BERTH_IDLE_SECONDS; 0: never). */
  idleSleepMs?: number;
  /** For tests: the listener finds no sandbox (default BERTH_TEST_SANDBOX_UNAVAILABLE). */
  sandboxUnavailable?: boolean;
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
 * agent servers of its placement (local processes, containers or a cluster)
 * and reports back. It only ever calls the control plane (through `link`).
 */
export async function startListener(options: ListenerOptions): Promise<RunningListener> {
  const { link, logger } = options;
  const dirs = await prepareDataDir(options.dataDir, logger);
  const parts = new Lifecycle();
  return parts.run(async () => {
    const { host, port, publicUrl, authCacheMs } = options.router;
    const authorize = (deploymentId: string, apiKey: string) => link.authorize(deploymentId, apiKey);
    const router = new Router({ host, port, authorize, cacheTtlMs: authCacheMs, publicUrl, logger });
    const routerUrl = await router.listen();
    parts.defer(() => router.close());
    const logs = parts.own(
      new LogShipper(link, (err) => logger.warn({ err }, "shipping logs to the control plane failed; retrying")),
    );
    const owners = new DeploymentOwners();
    const runners = new Map<string, DeploymentRunner>();
    // Only local processes sleep: containers and pods keep running (docs/deploying.md, "Sleeping deployments").
    const idleMs = options.idleSleepMs ?? idleSleepMs();
    const sleeper =
      (options.compute?.type ?? "local") === "local" && idleMs > 0
        ? new IdleSleeper({ idleMs, link, logger, runners: () => runners.values() })
        : undefined;
    const context = placementContextOf(options, { dirs, router, logs, owners, sleeper });
    const placement = parts.own(await startPlacement(options, context, () => runners.values()));
    const runnerContext = { link, logs, logger, placement, deploymentsDir: dirs.deployments, serverVersion: SERVER_VERSION };
    const loop = new ReconcileLoop({
      link,
      logger,
      placement,
      owners,
      runners,
      runnerOf: (id) => new DeploymentRunner(id, runnerContext),
      pollMs: options.pollMs ?? 1000,
    });
    loop.wake();
    parts.defer(() => loop.stop());
    const poller = new BranchPoller(options.branchPollMs ?? branchPollMs(), link, () => loop.known, logger);
    poller.start();
    parts.defer(() => poller.stop());
    const metrics = new MetricsPusher(options.metricsIntervalMs ?? metricsIntervalMs(), link, () => runners.values(), logger);
    metrics.start();
    parts.defer(() => metrics.stop());
    if (sleeper) {
      sleeper.start();
      parts.defer(() => sleeper.stop());
    }
    logger.info({ router_url: routerUrl }, "listener started");
    return { routerUrl, wake: loop.wake, close: () => parts.close() };
  });
}

/** What the listener gives its placement: its parts, and how code is sandboxed. */
function placementContextOf(
  options: ListenerOptions,
  parts: { dirs: ListenerDirs; router: Router; logs: LogShipper; owners: DeploymentOwners; sleeper?: IdleSleeper },
): PlacementContext {
  const { dirs, router, logs, owners, sleeper } = parts;
  return {
    link: options.link,
    router,
    logs,
    logger: options.logger,
    secrets: new SecretSource(options.secretsFile),
    dirs,
    sandbox: {
      trustAllCode: options.trustAllCode ?? false,
      egressAllow: options.sandboxEgressAllow,
      tenantOf: owners.tenantOf,
      forceUnavailable: options.sandboxUnavailable ?? sandboxForcedUnavailable(),
    },
    ownerOf: owners.ownerOf,
    drainTimeoutMs: options.drainTimeoutMs ?? 60_000,
    ...(sleeper ? { sleeper } : {}),
  };
}

/** The placement `options.compute` names, chosen once: each kind is a folder of placements/. */
function startPlacement(
  options: ListenerOptions,
  context: PlacementContext,
  scalables: () => Iterable<DeploymentRunner>,
): Promise<Placement> {
  const compute = options.compute ?? { type: "local" };
  switch (compute.type) {
    case "local":
      return startLocalPlacement(context);
    case "docker": {
      const autoscale = options.autoscale ?? autoscaleSettings();
      return startContainerPlacement(context, { ...compute, autoscale, scalables });
    }
    case "cluster":
      return startClusterPlacement(context, { ...compute, logPollMs: compute.logPollMs ?? clusterLogPollMs() });
  }
}

/** The listener's directories; its data directory is its alone (sandboxes get their parts bound in). */
async function prepareDataDir(dataDir: string, logger: Logger): Promise<ListenerDirs> {
  const dirs: ListenerDirs = {
    dataDir,
    sources: join(dataDir, "sources"),
    installCache: join(dataDir, "install-cache"),
    deployments: join(dataDir, "deployments"),
    artifacts: join(dataDir, "artifacts"),
    gitCache: join(dataDir, "git-cache"),
    imageBuilds: join(dataDir, "image-builds"),
  };
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  const orphans = killOrphans(dirs.deployments);
  if (orphans > 0) logger.warn({ count: orphans }, "stopped agent servers left running by a previous listener");
  await removeSharedBuilds(dirs.artifacts, dirs.installCache);
  return dirs;
}
