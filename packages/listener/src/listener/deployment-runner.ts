import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { DeployError, type ServerInstance, type ServerSpec } from "../compute/types.js";
import { PLATFORM_WORKER_SLOTS } from "../compute/types.js";
import { FINAL_REVISION_STATUSES, type RevisionStatus } from "@berth/listener-protocol";
import type { AssignedRevision, Assignment, DeploymentReport, RevisionFacts } from "@berth/listener-protocol";
import { workerConcurrencyOf } from "../compute/cluster/render-scaling.js";
import type { DimensionState, Scalable, ScaleBounds, ScaleDimension } from "./autoscaler.js";
import { pushedBuildOf } from "./cluster-builds.js";
import { forgetPid, recordPid } from "./orphans.js";
import { type QueueDepth, readQueueDepth } from "./queue-metrics.js";
import { RevisionPreparation } from "./revision-preparation.js";
import { ServerGraphCheck } from "./server-graph-check.js";
import {
  companionContainersOf,
  customUrlOf,
  labelsOf,
  maxReplicasOf,
  replicasOf,
  resourcesOf,
  runWebhookEnvOf,
  scaleOutOf,
  tracingEnvOf,
  volumesOf,
} from "./revision-spec.js";
import { Abandoned, type Move, type Prepared, type RunnerContext } from "./revision-work.js";
import { upstreamKeyOf } from "./upstream-key.js";

export type { RunnerContext };

/** A revision a listener finds in one of these without working on it was left behind by a restart: it starts over. */
const RESUMABLE: readonly RevisionStatus[] = ["AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING", "UNKNOWN"];
/** Final statuses the control plane sets on its own (a newer revision, an interrupt): the work stops. */
const STOPPED: readonly RevisionStatus[] = ["SKIPPED", "INTERRUPTED"];
const BUILT_SOURCES = ["internal_source", "repo_host"];
/** What a container listener runs. */
const CONTAINER_SOURCES = ["internal_source", "repo_host", "external_image", "internal_image"];

/** A revision's started servers: API replicas (the router's targets), workers (scale-out), and the specs of more of each. */
interface Started {
  instances: ServerInstance[];
  workers: ServerInstance[];
  spec: ServerSpec;
  /** Scale-out mode: the workers' spec, and how far they may grow (queue_min_scale to queue_max_scale). */
  workerPool?: { spec: ServerSpec; bounds: ScaleBounds };
}

/** The serving revision: its servers, how many replicas it may have, and the key its servers require. */
interface Serving extends Started {
  revisionId: string;
  bounds: ScaleBounds;
  upstreamKey: string;
}

interface Job {
  revisionId: string;
  abort: AbortController;
}

/**
 * Brings one deployment to its desired state on local compute: builds and
 * starts its latest revision, switches the stable URL once it is healthy,
 * lets the previous revision finish its open requests, then stops it.
 */
export class DeploymentRunner implements Scalable {
  /** The serving revision's replicas (one on local compute; min_scale to max_scale of an image on a container listener). */
  private active: Serving | undefined;
  private job: Job | undefined;
  private tearingDown: Promise<void> | undefined;
  /** On a cluster listener: the revision the cluster serves (the cluster runs it; nothing here to restart). */
  private onCluster: string | undefined;
  /** Aborts replicas the autoscaler is starting when the runner stops. */
  private readonly stopping = new AbortController();

  private readonly preparation: RevisionPreparation;

  constructor(
    readonly deploymentId: string,
    private readonly context: RunnerContext,
  ) {
    this.preparation = new RevisionPreparation(deploymentId, context);
  }

  /** The serving revision's API replicas, for the router to follow restarts. */
  activeInstances(): ServerInstance[] {
    return this.active?.instances ?? [];
  }

  reconcile(assignment: Assignment): void {
    if (assignment.deleted) {
      this.tearingDown ??= this.teardown(assignment).catch((error: unknown) => {
        this.tearingDown = undefined; // tried again at the next pass
        this.context.logger.error({ err: error, deployment_id: this.deploymentId }, "tearing a deployment down failed");
      });
      return;
    }
    const latest = assignment.latest;
    if (this.job && (this.job.revisionId !== latest?.id || STOPPED.includes(latest.status))) {
      this.job.abort.abort(new Abandoned());
      this.job = undefined;
    }
    if (this.job || !latest) return;
    if (latest.status === "QUEUED" || RESUMABLE.includes(latest.status)) {
      const note =
        latest.status === "QUEUED" ? undefined : `The listener restarted while the revision was ${latest.status}; starting over`;
      this.startJob(assignment, latest, { restore: false, note });
    } else if (!this.active && !this.onCluster && assignment.active?.status === "DEPLOYED") {
      // After a listener restart: the deployed revision runs again, with no status change.
      this.startJob(assignment, assignment.active, { restore: true });
    }
  }

  scaling(): { replicas: DimensionState; workers?: DimensionState & { slotsPerWorker: number } } | undefined {
    const serving = this.active;
    if (!serving || this.job || this.tearingDown) return undefined;
    const replicas = { count: serving.instances.length, bounds: serving.bounds };
    const pool = serving.workerPool;
    if (!pool) return { replicas };
    // The runs one worker executes at once: the BERTH_WORKERS its spec sets (the platform's; deployments cannot set BERTH_*).
    const workers = { count: serving.workers.length, bounds: pool.bounds, slotsPerWorker: workerConcurrencyOf(pool.spec.env) };
    return { replicas, workers };
  }

  openRequests(): number {
    return this.context.router.openRequests(this.deploymentId);
  }

  /** The runs on the deployment's database, from one healthy API replica's GET /metrics. */
  queueDepth(): Promise<QueueDepth> {
    const serving = this.active;
    const replica = serving?.instances.find((instance) => instance.healthy());
    if (!serving || !replica) return Promise.reject(new Error("no healthy API replica to read the queue from"));
    return readQueueDepth(replica.url, serving.upstreamKey);
  }

  /**
   * Starts replicas or workers of the serving revision, or stops some:
   * replicas finish their open requests first; workers get SIGTERM and finish
   * their runs or hand them back to the queue.
   */
  async scaleTo(dimension: ScaleDimension, count: number, reason: string): Promise<void> {
    const serving = this.active;
    const spec = dimension === "replicas" ? serving?.spec : serving?.workerPool?.spec;
    if (!serving || !spec) return;
    const pool = dimension === "replicas" ? serving.instances : serving.workers;
    const from = pool.length;
    if (count === from) return;
    const log = this.context.logs.writer(this.deploymentId, serving.revisionId, "deploy");
    log({ level: "info", message: `Scaling from ${from} to ${count} ${dimension}: ${reason}` });
    const routeTo = () =>
      this.context.router.setTargets(
        this.deploymentId,
        serving.instances.map((instance) => instance.url),
      );
    if (count > from) {
      const added = await this.startReplicas(spec, count - from, this.stopping.signal);
      // A switch to another revision (or a stop) while they started: they serve nothing.
      if (this.active !== serving) return void (await Promise.all(added.map((instance) => this.stopInstance(instance))));
      pool.push(...added);
      for (const instance of added) await recordPid(this.deploymentDir(), instance.pid);
      if (dimension === "replicas") routeTo();
    } else if (dimension === "replicas") {
      const retired = pool.splice(count);
      routeTo();
      await Promise.all(retired.map((instance) => this.retire(instance)));
    } else {
      await Promise.all(pool.splice(count).map((instance) => this.stopInstance(instance)));
    }
    const serve = dimension === "replicas" ? "serve" : "run for";
    log({ level: "info", message: `${pool.length} ${dimension} ${serve} revision ${serving.revisionId}` });
  }

  /** Stops everything this runner started (listener shutdown); the deployment resumes at the next start. */
  async stop(): Promise<void> {
    this.stopping.abort(new Abandoned());
    this.job?.abort.abort(new Abandoned());
    this.job = undefined;
    if (this.active)
      await Promise.all([...this.active.instances, ...this.active.workers].map((instance) => this.stopInstance(instance)));
    this.active = undefined;
  }

  private startJob(assignment: Assignment, revision: AssignedRevision, options: { restore: boolean; note?: string }): void {
    const job: Job = { revisionId: revision.id, abort: new AbortController() };
    this.job = job;
    void this.run(assignment, revision, options, job.abort.signal)
      .catch((error: unknown) => {
        if (error instanceof Abandoned || job.abort.signal.aborted) return;
        this.context.logger.error(
          { err: error, deployment_id: this.deploymentId, revision_id: revision.id },
          "deploying a revision failed",
        );
      })
      .finally(() => {
        if (this.job === job) this.job = undefined;
      });
  }

  private async run(
    assignment: Assignment,
    revision: AssignedRevision,
    options: { restore: boolean; note?: string },
    signal: AbortSignal,
  ): Promise<void> {
    // Local compute: the build's graph check starts the revision's server, which then serves it (server-graph-check.ts).
    const serverCheck = this.context.images
      ? undefined
      : new ServerGraphCheck(async (configFile) => {
          const { spec } = await this.serverSpec(assignment, revision, { configFile }, {});
          const instance = await this.context.compute.start(spec, signal);
          await recordPid(this.deploymentDir(), instance.pid);
          return instance;
        });
    try {
      await this.deploy(assignment, revision, options, signal, serverCheck);
    } finally {
      // A server the check started that does not serve (the work failed or was abandoned first).
      const unused = serverCheck?.take();
      if (unused) await this.stopInstance(unused);
    }
  }

  private async deploy(
    assignment: Assignment,
    revision: AssignedRevision,
    { restore, note }: { restore: boolean; note?: string },
    signal: AbortSignal,
    serverCheck: ServerGraphCheck | undefined,
  ): Promise<void> {
    const { link, logs } = this.context;
    const buildLog = logs.writer(this.deploymentId, revision.id, "build");
    let status = revision.status;
    const move = async (to: RevisionStatus, message: string, report?: DeploymentReport, facts?: RevisionFacts) => {
      if (restore) return;
      // A client that sees a final status reads complete logs.
      if (FINAL_REVISION_STATUSES.includes(to)) await logs.flush();
      if (signal.aborted || !(await link.transition(revision.id, [status], to, message, report, facts))) throw new Abandoned();
      status = to;
    };
    if (note) buildLog({ level: "info", message: note });
    if (this.context.cluster) return this.runOnCluster(assignment, revision, restore, move, signal);

    const runnable = this.context.images ? CONTAINER_SOURCES : BUILT_SOURCES;
    if (!runnable.includes(revision.source)) {
      await move(
        "DEPLOY_FAILED",
        this.context.images
          ? `This listener deploys ${CONTAINER_SOURCES.join(" and ")} revisions, not ${revision.source} yet`
          : `This listener runs local processes: it deploys internal_source and repo_host revisions, not ${revision.source} (container images need a docker or cluster listener)`,
      );
      return this.reportIdle(assignment);
    }

    // Before the build: on local compute its graph check may start the server, which creates it.
    if (assignment.status === "AWAITING_DATABASE") buildLog({ level: "info", message: "Creating the deployment's database" });
    let prepared: Prepared;
    if (revision.source === "external_image" || revision.source === "internal_image") {
      const image = String(revision.source_revision_config.image_uri);
      prepared = { configFile: "", image, reused: true, external: true };
      await move("AWAITING_DEPLOY", `An image to pull (${image}): nothing to build`);
    } else {
      const built = await this.preparation.buildSource(revision, buildLog, move, signal, serverCheck?.check);
      if (!built) return built === null ? this.reportIdle(assignment) : undefined;
      prepared = built;
    }

    await move(
      "DEPLOYING",
      serverCheck?.hasServer ? "The agent server the graph check started takes over" : "Starting the agent server",
    );
    const checked = serverCheck?.take();
    let started: Started;
    let upstreamKey: string;
    try {
      const referenced = prepared.external ? await this.preparation.pullExternal(prepared, revision) : {};
      const server = await this.serverSpec(assignment, revision, prepared, referenced);
      upstreamKey = server.upstreamKey;
      if (serverCheck?.startFailure) throw serverCheck.startFailure;
      started = checked
        ? { instances: [checked], workers: [], spec: server.spec }
        : await this.startServers(revision, server.spec, signal);
    } catch (error) {
      if (checked) await this.stopInstance(checked);
      if (signal.aborted) throw new Abandoned();
      const reason =
        error instanceof DeployError ? error.message : `Starting the agent server failed: ${(error as Error).message}`;
      await move("DEPLOY_FAILED", reason);
      return this.reportIdle(assignment);
    }
    const { instances, workers, spec, workerPool } = started;
    for (const instance of [...instances, ...workers]) await recordPid(this.deploymentDir(), instance.pid);
    const serving: DeploymentReport = {
      status: "READY",
      active_revision_id: revision.id,
      // An external image's custom_url is where its users reach it (their own ingress); else the router's stable URL.
      custom_url: customUrlOf(revision) ?? this.context.router.urlOf(this.deploymentId),
      image_version: this.context.serverVersion,
    };
    const replicas = instances.length > 1 ? `, ${instances.length} replicas` : "";
    const scaleOut = workers.length > 0 ? `, ${workers.length} workers, PostgreSQL and Redis` : "";
    try {
      const digest = prepared.image ? await this.context.images?.digestOf(prepared.image) : undefined;
      await move("DEPLOYED", `Serving (revision ${revision.number}${replicas}${scaleOut})`, serving, { image_digest: digest });
    } catch (error) {
      await Promise.all([...instances, ...workers].map((instance) => this.stopInstance(instance)));
      throw error;
    }
    const previous = this.active;
    const bounds = this.context.images ? { min: replicasOf(revision), max: maxReplicasOf(revision) } : { min: 1, max: 1 };
    this.active = { revisionId: revision.id, instances, workers, spec, workerPool, bounds, upstreamKey };
    this.context.router.setTargets(
      this.deploymentId,
      instances.map((instance) => instance.url),
      upstreamKey,
    );
    if (restore) await link.report(this.deploymentId, serving);
    if (previous) {
      // Old workers stop once the new revision serves: SIGTERM lets them finish their runs (or hand them back to the queue).
      await Promise.all([
        ...previous.instances.filter((old) => !instances.includes(old)).map((old) => this.retire(old)),
        ...previous.workers.filter((old) => !workers.includes(old)).map((old) => this.stopInstance(old)),
      ]);
    }
  }

  /**
   * A revision on a cluster listener: its image (external_image's, or a built
   * source's, pushed to the listener's registry) rendered into objects,
   * applied, and followed until the rollout completes or fails with the pod's reason.
   */
  private async runOnCluster(
    assignment: Assignment,
    revision: AssignedRevision,
    restore: boolean,
    move: Move,
    signal: AbortSignal,
  ): Promise<void> {
    const cluster = this.context.cluster!;
    // After a listener restart the cluster still runs what it ran.
    if (restore) {
      this.onCluster = revision.id;
      return void cluster.podLogs?.follow(this.deploymentId, revision.id, cluster.namespaceOf(revision));
    }
    let image: string;
    let imageId: string | undefined;
    if (revision.source === "external_image") {
      image = String(revision.source_revision_config.image_uri);
      await move("AWAITING_DEPLOY", `An image for the cluster (${image}): nothing to build`);
    } else if (BUILT_SOURCES.includes(revision.source) && this.context.clusterImages) {
      const buildLog = this.context.logs.writer(this.deploymentId, revision.id, "build");
      const work = { preparation: this.preparation, images: this.context.clusterImages, buildLog, move, signal };
      const pushed = await pushedBuildOf(this.deploymentId, revision, work);
      if (!pushed) return this.reportIdle(assignment);
      image = pushed.ref;
      imageId = pushed.imageId;
    } else {
      await move(
        "DEPLOY_FAILED",
        `This cluster listener deploys external_image, internal_source and repo_host revisions, not ${revision.source}`,
      );
      return this.reportIdle(assignment);
    }
    const namespace = cluster.namespaceOf(revision);
    await move("DEPLOYING", `Applying the revision's objects in namespace ${namespace}`);
    let url: string;
    try {
      const objects = await cluster.render(assignment, revision, image, this.context.link.tracingEndpoint());
      url = await cluster.deploy(objects, revision, this.deploymentId, signal);
    } catch (error) {
      if (signal.aborted) throw new Abandoned();
      await move("DEPLOY_FAILED", error instanceof DeployError ? error.message : `Deploying failed: ${(error as Error).message}`);
      return this.reportIdle(assignment);
    }
    const report: DeploymentReport = {
      status: "READY",
      active_revision_id: revision.id,
      custom_url: customUrlOf(revision) ?? url,
      image_version: this.context.serverVersion,
    };
    await move("DEPLOYED", `Serving on the cluster (revision ${revision.number}, namespace ${namespace})`, report, {
      image_digest: imageId,
    });
    this.onCluster = revision.id;
    cluster.podLogs?.follow(this.deploymentId, revision.id, namespace);
  }

  /** What the revision's agent servers run, with the deployment's data dir made and the key its servers require. */
  private async serverSpec(
    assignment: Assignment,
    revision: AssignedRevision,
    prepared: Pick<Prepared, "configFile" | "image" | "external">,
    referenced: Record<string, string>,
  ): Promise<{ spec: ServerSpec; upstreamKey: string }> {
    const dataDir = join(this.context.dirs.deployments, this.deploymentId, "data");
    await mkdir(dataDir, { recursive: true });
    const upstreamKey = await upstreamKeyOf(this.deploymentDir());
    const spec: ServerSpec = {
      deploymentId: this.deploymentId,
      revisionId: revision.id,
      configFile: prepared.configFile,
      image: prepared.image,
      externalImage: prepared.external,
      dataDir,
      env: {
        ...referenced,
        ...Object.fromEntries(revision.secrets.map(({ name, value }) => [name, value])),
        ...this.tracingEnv(assignment),
        ...runWebhookEnvOf(assignment),
        BERTH_API_KEY: upstreamKey,
      },
      resources: resourcesOf(revision),
      labels: labelsOf(revision),
      volumes: volumesOf(revision),
      companions: companionContainersOf(revision),
    };
    return { spec, upstreamKey };
  }

  /**
   * Starts the revision's API replicas (min_scale on a container listener,
   * else one) and, in scale-out mode, its deployment's PostgreSQL and Redis
   * first, then its worker containers beside the replicas.
   */
  private async startServers(revision: AssignedRevision, base: ServerSpec, signal: AbortSignal): Promise<Started> {
    const replicas = this.context.images ? replicasOf(revision) : 1;
    const plan = this.context.scaleOut ? scaleOutOf(revision) : undefined;
    if (!plan || !this.context.scaleOut)
      return { instances: await this.startReplicas(base, replicas, signal), workers: [], spec: base };
    const deployLog = this.context.logs.writer(this.deploymentId, revision.id, "deploy");
    const endpoints = await this.context.scaleOut.prepare(this.deploymentId, plan, deployLog, signal);
    const spec: ServerSpec = {
      ...base,
      role: "api",
      network: endpoints.network,
      env: { ...base.env, ...endpoints.env, BERTH_ROLE: "api" },
    };
    const workerSpec: ServerSpec = {
      ...spec,
      role: "worker",
      // The platform's run slots unless the spec says (resources.workers still wins, in serverEnv).
      env: { BERTH_WORKERS: String(PLATFORM_WORKER_SLOTS), ...spec.env, BERTH_ROLE: "worker" },
      resources: plan.workerResources,
    };
    const [instances, workers] = await Promise.allSettled([
      this.startReplicas(spec, replicas, signal),
      this.startReplicas(workerSpec, plan.workers, signal),
    ]);
    if (instances.status === "fulfilled" && workers.status === "fulfilled") {
      const workerPool = { spec: workerSpec, bounds: { min: plan.workers, max: plan.maxWorkers } };
      return { instances: instances.value, workers: workers.value, spec, workerPool };
    }
    const failed = [instances, workers].find((result) => result.status === "rejected") as PromiseRejectedResult;
    const up = [instances, workers].flatMap((result) => (result.status === "fulfilled" ? result.value : []));
    await Promise.all(up.map((instance) => instance.stop()));
    throw failed.reason;
  }

  /** Starts `count` servers of the spec in parallel; if one fails, the others are stopped and its error thrown. */
  private async startReplicas(spec: ServerSpec, count: number, signal: AbortSignal): Promise<ServerInstance[]> {
    const started = await Promise.allSettled(Array.from({ length: count }, () => this.context.compute.start(spec, signal)));
    const failed = started.find((result): result is PromiseRejectedResult => result.status === "rejected");
    const instances = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    if (!failed) return instances;
    await Promise.all(instances.map((instance) => instance.stop()));
    throw failed.reason;
  }

  /** Lets a replaced revision finish what it serves, then stops it. */
  private async retire(instance: ServerInstance): Promise<void> {
    const drained = this.context.router.drained(instance.url);
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, this.context.drainTimeoutMs).unref());
    await Promise.race([drained, timeout]);
    await this.stopInstance(instance);
  }

  /** Every run of the deployment is traced into its project on the control plane (the standard LangChain variables). */
  private tracingEnv(assignment: Assignment): Record<string, string> {
    return tracingEnvOf(assignment, this.context.link.tracingEndpoint());
  }

  private async stopInstance(instance: ServerInstance): Promise<void> {
    await instance.stop();
    await forgetPid(this.deploymentDir(), instance.pid);
  }

  private deploymentDir(): string {
    return join(this.context.dirs.deployments, this.deploymentId);
  }

  /** Nothing new serves: the deployment is UNUSED unless an older revision still does. */
  private async reportIdle(assignment: Assignment): Promise<void> {
    if (!this.active && !assignment.active_revision_id) await this.context.link.report(this.deploymentId, { status: "UNUSED" });
  }

  private async teardown(assignment: Assignment): Promise<void> {
    await this.stop();
    const placed = assignment.active ?? assignment.latest;
    if (this.context.cluster && placed)
      await this.context.cluster.remove(this.deploymentId, this.context.cluster.namespaceOf(placed));
    await this.context.clusterImages?.removeAll(this.deploymentId);
    this.context.router.remove(this.deploymentId);
    await this.context.scaleOut?.remove(this.deploymentId);
    const kept = (await this.context.images?.removeAll(this.deploymentId)) ?? [];
    if (kept.length > 0)
      this.context.logger.warn(
        { deployment_id: this.deploymentId, images: kept },
        "the deleted deployment's images stay: other containers use them",
      );
    await this.context.resources?.release(this.deploymentId);
    await rm(join(this.context.dirs.deployments, this.deploymentId), { recursive: true, force: true });
    await this.context.link.purge(this.deploymentId);
  }
}
