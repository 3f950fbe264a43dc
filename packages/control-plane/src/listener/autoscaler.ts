import { envNumber, type Logger } from "@berth/service-kit";

export interface AutoscaleSettings {
  /** How often each deployment's load is read. */
  intervalMs: number;
  /** Requests in flight one replica is sized for: more than this per replica asks for another. */
  targetOpenRequests: number;
  /** How long the load must stay low before one replica is removed (a burst does not make replicas come and go). */
  scaleDownAfterMs: number;
}

export function autoscaleSettings(env: NodeJS.ProcessEnv = process.env): AutoscaleSettings {
  return {
    intervalMs: envNumber("BERTH_AUTOSCALE_INTERVAL_SECONDS", 5, { min: 0.1 }, env) * 1000,
    targetOpenRequests: envNumber("BERTH_AUTOSCALE_TARGET_REQUESTS", 10, { min: 1, integer: true }, env),
    scaleDownAfterMs: envNumber("BERTH_AUTOSCALE_SCALE_DOWN_SECONDS", 60, { min: 0 }, env) * 1000,
  };
}

export interface ScaleBounds {
  min: number;
  max: number;
}

/** Replicas the load asks for: enough that none has more than `target` requests in flight, within the bounds. */
export function wantedReplicas(openRequests: number, target: number, bounds: ScaleBounds): number {
  return Math.min(bounds.max, Math.max(bounds.min, Math.ceil(openRequests / target)));
}

/** A deployment the autoscaler can resize: what it serves now, what it may serve, and how to change it. */
export interface Scalable {
  readonly deploymentId: string;
  /** The serving revision's replica count and bounds; undefined while it cannot scale (no serving revision, a deploy under way). */
  scaling(): { replicas: number; bounds: ScaleBounds } | undefined;
  /** Requests in flight to its replicas now. */
  openRequests(): number;
  /** Starts or retires replicas until `count` serve. */
  scaleTo(count: number, reason: string): Promise<void>;
}

/**
 * Resizes deployments between min_scale and max_scale by the requests in
 * flight at the router: up at once (to what the load asks for), down one
 * replica at a time once the load has asked for fewer for scaleDownAfterMs.
 */
export class Autoscaler {
  private readonly lowSince = new Map<string, number>();
  private readonly busy = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: AutoscaleSettings,
    private readonly deployments: () => Iterable<Scalable>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.tick(Date.now()), this.settings.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One look at every deployment (exposed for the loop only). */
  private tick(now: number): void {
    for (const deployment of this.deployments()) {
      const id = deployment.deploymentId;
      const state = deployment.scaling();
      if (!state || this.busy.has(id) || state.bounds.max <= state.bounds.min) {
        if (!state) this.lowSince.delete(id);
        continue;
      }
      const open = deployment.openRequests();
      const wanted = wantedReplicas(open, this.settings.targetOpenRequests, state.bounds);
      let target = state.replicas;
      if (wanted > state.replicas) {
        target = wanted;
        this.lowSince.delete(id);
      } else if (wanted < state.replicas) {
        const since = this.lowSince.get(id) ?? now;
        this.lowSince.set(id, since);
        if (now - since >= this.settings.scaleDownAfterMs) {
          target = state.replicas - 1;
          this.lowSince.delete(id);
        }
      } else {
        this.lowSince.delete(id);
      }
      if (target === state.replicas) continue;
      const reason = `${open} requests in flight over ${state.replicas} replicas (${this.settings.targetOpenRequests} per replica)`;
      this.busy.add(id);
      void deployment
        .scaleTo(target, reason)
        .catch((err: unknown) => this.logger.warn({ err, deployment_id: id }, "scaling a deployment failed"))
        .finally(() => this.busy.delete(id));
    }
  }
}
