import { workerConcurrencyOf } from "../../../compute/cluster/render-scaling.js";
import type { ServerInstance, ServerSpec } from "../../../compute/types.js";
import type { ScaleBounds, ScaleDimension } from "../../autoscaler.js";
import type { MetricsTarget } from "../../metrics-pusher.js";
import { type QueueDepth, readQueueDepth } from "../../queue-metrics.js";
import { Abandoned } from "../../revision-work.js";
import type { ScalingState, Serving } from "../placement.js";
import type { Due } from "../placement-context.js";
import type { RoutedRevision, SupervisedServers } from "./supervised-servers.js";
import type { RevisionWork } from "../../revision-work.js";

/** A revision's started servers: API replicas (the router's targets), workers (scale-out), and the specs of more of each. */
export interface ServerSet {
  instances: ServerInstance[];
  workers: ServerInstance[];
  spec: ServerSpec;
  /** Scale-out mode: the workers' spec, and how far they may grow (queue_min_scale to queue_max_scale). */
  workerPool?: { spec: ServerSpec; bounds: ScaleBounds };
}

export interface SupervisedServingOptions {
  deploymentId: string;
  revisionId: string;
  summary: string;
  url: string;
  imageDigest: string | undefined;
  servers: ServerSet;
  /** How many API replicas it may have (one on local compute; min_scale to max_scale of a container deployment). */
  bounds: ScaleBounds;
  /** The key its servers require, sent by the router. */
  upstreamKey: string;
}

/** A revision served by supervised agent servers behind the router; the autoscaler resizes it. */
export class SupervisedServing implements Serving, RoutedRevision {
  readonly deploymentId: string;
  readonly revisionId: string;
  readonly summary: string;
  readonly url: string;
  readonly imageDigest: string | undefined;
  readonly upstreamKey: string;
  private readonly servers: ServerSet;
  private readonly bounds: ScaleBounds;
  /** Aborts replicas the autoscaler is starting when it is stopped. */
  private readonly stopping = new AbortController();
  /** While asleep: what its next request calls first. */
  private wakeOnRequest: (() => Promise<void>) | undefined;

  constructor(
    private readonly supervised: SupervisedServers,
    options: SupervisedServingOptions,
  ) {
    this.deploymentId = options.deploymentId;
    this.revisionId = options.revisionId;
    this.summary = options.summary;
    this.url = options.url;
    this.imageDigest = options.imageDigest;
    this.upstreamKey = options.upstreamKey;
    this.servers = options.servers;
    this.bounds = options.bounds;
  }

  /** Its API replicas now. */
  apiReplicas(): ServerInstance[] {
    return this.servers.instances;
  }

  activate(): void {
    if (this.wakeOnRequest && this.asleep()) this.supervised.routeAsleep(this, this.wakeOnRequest);
    else this.supervised.route(this);
  }

  deactivate(): void {
    this.supervised.unroute(this);
  }

  healthy(): boolean {
    return this.servers.instances.length > 0 && this.servers.instances.every((instance) => instance.healthy());
  }

  /** Its replicas finish their open requests first; its workers get SIGTERM and finish their runs (or hand them back to the queue). */
  async retire(): Promise<void> {
    await Promise.all([
      ...this.servers.instances.map((instance) => this.supervised.retire(this.deploymentId, instance)),
      ...this.servers.workers.map((instance) => this.supervised.stopInstance(this.deploymentId, instance)),
    ]);
  }

  async stop(): Promise<void> {
    this.stopping.abort(new Abandoned());
    const all = [...this.servers.instances, ...this.servers.workers];
    await Promise.all(all.map((instance) => this.supervised.stopInstance(this.deploymentId, instance)));
  }

  /** Whether its servers are stopped for lack of requests (sleep). */
  asleep(): boolean {
    return this.servers.instances.length === 0 && this.servers.workers.length === 0;
  }

  /** When its deployment last had a request through the router (ms since the epoch). */
  lastRequestAt(): number | undefined {
    return this.supervised.lastRequestAt(this.deploymentId);
  }

  /**
   * Stops its servers for lack of requests: new requests are held and call
   * `wake` first. Nothing is lost: its data is on disk or in its database.
   * The sleep is noted on disk (with `nextDue`): a listener restart keeps it.
   */
  async sleep(wake: () => Promise<void>, nextDue?: Due): Promise<void> {
    if (!this.supervised.routes(this)) return;
    this.wakeOnRequest = wake;
    this.supervised.routeAsleep(this, wake);
    const { instances, workers } = this.servers;
    this.servers.instances = [];
    this.servers.workers = [];
    // A request forwarded just before finishes first.
    await Promise.all([
      ...instances.map((instance) => this.supervised.retire(this.deploymentId, instance)),
      ...workers.map((instance) => this.supervised.stopInstance(this.deploymentId, instance)),
    ]);
    const mark = { revision_id: this.revisionId, ...(nextDue ? { next_due: nextDue } : {}) };
    if (this.asleep()) await this.supervised.markAsleep(this.deploymentId, mark);
  }

  /** Restored asleep after a listener restart (no server started): its first request calls `wake`, once activated. */
  restoreAsleep(wake: () => Promise<void>): void {
    this.wakeOnRequest = wake;
  }

  /** Starts its API servers again (as many as it had at least, its minimum) and routes to them once healthy. */
  async wake(signal: AbortSignal): Promise<void> {
    if (!this.asleep()) return;
    const started = await this.supervised.startReplicas(this.servers.spec, Math.max(1, this.bounds.min), signal);
    await this.supervised.recordPids(this.deploymentId, started);
    this.servers.instances = started;
    this.wakeOnRequest = undefined;
    if (this.supervised.routes(this)) this.activate();
    await this.supervised.clearAsleep(this.deploymentId);
  }

  scaling(): ScalingState {
    const replicas = { count: this.servers.instances.length, bounds: this.bounds };
    const pool = this.servers.workerPool;
    if (!pool) return { replicas };
    // The runs one worker executes at once: the BERTH_WORKERS its spec sets (the platform's; deployments cannot set BERTH_*).
    const slotsPerWorker = workerConcurrencyOf(pool.spec.env);
    return { replicas, workers: { count: this.servers.workers.length, bounds: pool.bounds, slotsPerWorker } };
  }

  openRequests(): number {
    return this.supervised.openRequests(this.deploymentId);
  }

  /** The runs on the deployment's database, from one healthy API replica's GET /metrics. */
  queueDepth(): Promise<QueueDepth> {
    const replica = this.servers.instances.find((instance) => instance.healthy());
    if (!replica) return Promise.reject(new Error("no healthy API replica to read the queue from"));
    return readQueueDepth(replica.url, this.upstreamKey);
  }

  /** Its healthy API replicas, named by their place (scale-out workers serve no /metrics). */
  metricsTargets(): MetricsTarget[] {
    return this.servers.instances.flatMap((instance, index) =>
      instance.healthy() ? [{ replica: `replica-${index + 1}`, url: instance.url, upstreamKey: this.upstreamKey }] : [],
    );
  }

  /**
   * Starts replicas or workers, or stops some: replicas finish their open
   * requests first; workers get SIGTERM and finish their runs or hand them
   * back to the queue.
   */
  async scaleTo(dimension: ScaleDimension, count: number, reason: string): Promise<void> {
    const spec = dimension === "replicas" ? this.servers.spec : this.servers.workerPool?.spec;
    if (!spec) return;
    const pool = dimension === "replicas" ? this.servers.instances : this.servers.workers;
    const from = pool.length;
    if (count === from) return;
    const log = this.supervised.deployLog(this.deploymentId, this.revisionId);
    log({ level: "info", message: `Scaling from ${from} to ${count} ${dimension}: ${reason}` });
    if (count > from) {
      const added = await this.supervised.startReplicas(spec, count - from, this.stopping.signal);
      // A switch to another revision (or a stop) while they started: they serve nothing.
      if (this.stopping.signal.aborted || !this.supervised.routes(this))
        return void (await Promise.all(added.map((instance) => this.supervised.stopInstance(this.deploymentId, instance))));
      pool.push(...added);
      await this.supervised.recordPids(this.deploymentId, added);
      if (dimension === "replicas") this.activate();
    } else if (dimension === "replicas") {
      const retired = pool.splice(count);
      this.activate();
      await Promise.all(retired.map((instance) => this.supervised.retire(this.deploymentId, instance)));
    } else {
      await Promise.all(pool.splice(count).map((instance) => this.supervised.stopInstance(this.deploymentId, instance)));
    }
    const serve = dimension === "replicas" ? "serve" : "run for";
    log({ level: "info", message: `${pool.length} ${dimension} ${serve} revision ${this.revisionId}` });
  }
}

/** The started servers of a revision, as what serves it once routed to (their pids recorded). */
export async function servingOf(
  supervised: SupervisedServers,
  { assignment, revision }: RevisionWork,
  servers: ServerSet,
  how: { upstreamKey: string; bounds: ScaleBounds; imageDigest: string | undefined },
): Promise<SupervisedServing> {
  const { instances, workers } = servers;
  await supervised.recordPids(assignment.id, [...instances, ...workers]);
  const replicas = instances.length > 1 ? `, ${instances.length} replicas` : "";
  const scaleOut = workers.length > 0 ? `, ${workers.length} workers, PostgreSQL and Redis` : "";
  return new SupervisedServing(supervised, {
    deploymentId: assignment.id,
    revisionId: revision.id,
    summary: `Serving (revision ${revision.number}${replicas}${scaleOut})`,
    url: supervised.urlOf(assignment.id),
    servers,
    ...how,
  });
}
