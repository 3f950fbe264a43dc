import type { Logger } from "@berth/service-kit";
import type { QueueDepth } from "./queue-metrics.js";

/** How the autoscaler works (from BERTH_AUTOSCALE_*, settings.ts). */
export interface AutoscaleSettings {
  /** How often each deployment's load is read. */
  intervalMs: number;
  /** Requests in flight one replica is sized for: more than this per replica asks for another. */
  targetOpenRequests: number;
  /** How long the load must stay low before one replica (or worker) is removed (a burst does not make containers come and go). */
  scaleDownAfterMs: number;
}

export interface ScaleBounds {
  min: number;
  max: number;
}

/** Replicas the load asks for: enough that none has more than `target` requests in flight, within the bounds. */
export function wantedReplicas(openRequests: number, target: number, bounds: ScaleBounds): number {
  return Math.min(bounds.max, Math.max(bounds.min, Math.ceil(openRequests / target)));
}

/** Workers the queue asks for: enough run slots for every pending and running run, within queue_min_scale and queue_max_scale. */
export function wantedWorkers(queue: QueueDepth, slotsPerWorker: number, bounds: ScaleBounds): number {
  return wantedReplicas(queue.pending + queue.running, slotsPerWorker, bounds);
}

/** What the autoscaler resizes: a deployment's API replicas, or its scale-out worker containers. */
export type ScaleDimension = "replicas" | "workers";

/** One dimension's size now and how far it may go. */
export interface DimensionState {
  count: number;
  bounds: ScaleBounds;
}

/** A deployment the autoscaler can resize: what it runs now, what it may run, and how to change it. */
export interface Scalable {
  readonly deploymentId: string;
  /**
   * The serving revision's replicas, and its workers in scale-out mode (they
   * scale when queue_max_scale is above queue_min_scale); undefined while it
   * cannot scale (no serving revision, a deploy under way).
   */
  scaling(): { replicas: DimensionState; workers?: DimensionState & { slotsPerWorker: number } } | undefined;
  /** Requests in flight to its replicas now. */
  openRequests(): number;
  /** Runs pending and running on its database (an API replica's GET /metrics); rejects when they cannot be read. */
  queueDepth(): Promise<QueueDepth>;
  /** Starts or retires containers of `dimension` until `count` run. */
  scaleTo(dimension: ScaleDimension, count: number, reason: string): Promise<void>;
}

/**
 * The next size of a dimension: up at once to `wanted`; down by one once
 * `wanted` has stayed below `current` since `lowSince` for `quietMs`. Returns
 * the target and when the low load began (undefined when it is not low).
 */
export function nextSize(
  current: number,
  wanted: number,
  lowSince: number | undefined,
  now: number,
  quietMs: number,
): { target: number; lowSince: number | undefined } {
  if (wanted > current) return { target: wanted, lowSince: undefined };
  if (wanted === current) return { target: current, lowSince: undefined };
  const since = lowSince ?? now;
  if (now - since >= quietMs) return { target: current - 1, lowSince: undefined };
  return { target: current, lowSince: since };
}

/**
 * Resizes deployments: API replicas between min_scale and max_scale by the
 * requests in flight at the router, and scale-out workers between
 * queue_min_scale and queue_max_scale by the runs queued and running. Each
 * grows at once (to what the load asks for) and shrinks one container at a
 * time once the load has asked for fewer for scaleDownAfterMs.
 */
export class Autoscaler {
  /** By `<deployment id>/<dimension>`: when its load began to ask for fewer. */
  private readonly lowSince = new Map<string, number>();
  /** `<deployment id>/<dimension>` being measured or resized: the next looks leave it alone. */
  private readonly busy = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: AutoscaleSettings,
    private readonly deployments: () => Iterable<Scalable>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(Date.now()), this.settings.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One look at every deployment (the loop's; tests call it with their own clock). Resolves once its resizes are done. */
  async tick(now: number): Promise<void> {
    const work: Promise<void>[] = [];
    for (const deployment of this.deployments()) {
      const id = deployment.deploymentId;
      const state = deployment.scaling();
      if (!state?.workers) this.lowSince.delete(`${id}/workers`);
      if (!state) {
        this.lowSince.delete(`${id}/replicas`);
        continue;
      }
      const { replicas, workers } = state;
      if (replicas.bounds.max > replicas.bounds.min) {
        work.push(
          this.step(deployment, "replicas", replicas, now, async () => {
            const open = deployment.openRequests();
            const target = this.settings.targetOpenRequests;
            return {
              wanted: wantedReplicas(open, target, replicas.bounds),
              reason: `${open} requests in flight over ${replicas.count} replicas (${target} per replica)`,
            };
          }),
        );
      }
      if (workers && workers.bounds.max > workers.bounds.min) {
        work.push(
          this.step(deployment, "workers", workers, now, async () => {
            const queue = await deployment.queueDepth();
            return {
              wanted: wantedWorkers(queue, workers.slotsPerWorker, workers.bounds),
              reason: `${queue.pending} runs pending and ${queue.running} running for ${workers.count} workers (${workers.slotsPerWorker} per worker)`,
            };
          }),
        );
      }
    }
    await Promise.all(work);
  }

  /** Measures one dimension and resizes it if the load asks; a failed measure or resize is logged and changes nothing. */
  private async step(
    deployment: Scalable,
    dimension: ScaleDimension,
    state: DimensionState,
    now: number,
    measure: () => Promise<{ wanted: number; reason: string }>,
  ): Promise<void> {
    const key = `${deployment.deploymentId}/${dimension}`;
    if (this.busy.has(key)) return;
    this.busy.add(key);
    const context = { deployment_id: deployment.deploymentId, dimension };
    try {
      let load: { wanted: number; reason: string };
      try {
        load = await measure();
      } catch (err) {
        return this.logger.warn({ ...context, err }, "reading a deployment's load failed: its size stays");
      }
      const next = nextSize(state.count, load.wanted, this.lowSince.get(key), now, this.settings.scaleDownAfterMs);
      if (next.lowSince === undefined) this.lowSince.delete(key);
      else this.lowSince.set(key, next.lowSince);
      if (next.target !== state.count) await deployment.scaleTo(dimension, next.target, load.reason);
    } catch (err) {
      this.logger.warn({ ...context, err }, "scaling a deployment failed");
    } finally {
      this.busy.delete(key);
    }
  }
}
