import type { Logger } from "@berth/service-kit";
import type { DeploymentType, ObservedDeployment } from "@berth/listener-protocol";
import { z } from "zod";
import type { ControlPlaneLink } from "./link.js";
import { SupervisedServing } from "./placements/supervised/supervised-serving.js";
import type { Due } from "./placements/placement-context.js";
import type { Serving } from "./placements/placement.js";
import type { DeploymentRunner } from "./deployment-runner.js";

/**
 * The deployment types that sleep when idle: dev_free, dev, and none given
 * (an upload through the spec's API, which takes no type); prod always runs.
 */
export const SLEEPING_TYPES: readonly (DeploymentType | null)[] = ["dev_free", "dev", null];

/** A sleeping deployment wakes this long before its earliest cron or delayed run is due, so it starts on time. */
const WAKE_AHEAD_MS = 5_000;
/** A read of the deployment's crons that takes longer fails (it stays awake, and is looked at again). */
const READ_TIMEOUT_MS = 5_000;

const cronsBody = z.array(z.object({ next_run_date: z.string().nullable().optional() }));

export interface IdleSleeperOptions {
  /** How long without a request before a deployment sleeps (BERTH_IDLE_SECONDS); 0: never. */
  idleMs: number;
  link: ControlPlaneLink;
  logger: Logger;
  runners: () => Iterable<DeploymentRunner>;
}

/** What the sleeper knows of one deployment's serving revision. */
interface Watched {
  serving: SupervisedServing;
  /** Since when it has run without a request: its start, or its last wake. */
  awakeSince: number;
  /** When its earliest cron or delayed run is due (ms since the epoch), as read before it slept. */
  nextDue: Due | undefined;
  /** A sleep under way. */
  sleeping?: Promise<void>;
  /** A wake under way, shared by whatever asked for it (requests, a cron). */
  waking?: Promise<void>;
}

/**
 * Scale-to-zero for supervised agent servers (local compute): a deployment of
 * a type that sleeps (SLEEPING_TYPES) with no request through the router for
 * `idleMs`, no request or stream open, no run pending or running and no cron
 * or delayed run due soon has its servers stopped. The router holds its next
 * request while it wakes; a cron or a run delayed by after_seconds wakes it
 * shortly before it is due. Each sleep and wake is reported (the Sleeping
 * condition, an event on the revision).
 */
export class IdleSleeper {
  private readonly watched = new Map<string, Watched>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private looking = false;

  constructor(private readonly options: IdleSleeperOptions) {}

  start(): void {
    if (this.options.idleMs <= 0) return;
    // Often enough that a deployment sleeps near its idle time and a cron's wake is on time.
    const everyMs = Math.min(Math.max(this.options.idleMs / 4, 250), 2_000);
    this.timer = setInterval(() => void this.look(), everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await Promise.allSettled([...this.watched.values()].flatMap((watched) => [watched.sleeping, watched.waking]));
  }

  /** One look at every deployment: which sleep now, which wake for a cron. */
  private async look(): Promise<void> {
    if (this.looking) return;
    this.looking = true;
    try {
      const seen = new Set<string>();
      for (const runner of this.options.runners()) {
        // Kept while its runner works too: a serving restored asleep is watched from its start.
        seen.add(runner.deploymentId);
        const watched = this.watch(runner);
        if (!watched) continue;
        await this.consider(runner.deploymentId, watched).catch((err: unknown) =>
          this.options.logger.warn({ err, deployment_id: runner.deploymentId }, "deciding whether a deployment sleeps failed"),
        );
      }
      for (const id of this.watched.keys()) if (!seen.has(id)) this.watched.delete(id);
    } finally {
      this.looking = false;
    }
  }

  /**
   * A serving restored asleep after a listener restart (its sleep was noted
   * on disk): its first request wakes it, as does `nextDue` (read before it
   * slept), as if this listener had put it to sleep.
   */
  adoptAsleep(serving: Serving, nextDue: Due | undefined): void {
    if (!(serving instanceof SupervisedServing)) return;
    const watched: Watched = { serving, awakeSince: Date.now(), nextDue };
    this.watched.set(serving.deploymentId, watched);
    serving.restoreAsleep(() => this.wake(serving.deploymentId, watched, "Woke for a request"));
  }

  /** The runner's serving revision, when it is one that may sleep. */
  private watch(runner: DeploymentRunner): Watched | undefined {
    const settled = runner.settled();
    if (!settled || !(settled.serving instanceof SupervisedServing) || !SLEEPING_TYPES.includes(settled.deploymentType)) {
      return undefined;
    }
    const known = this.watched.get(runner.deploymentId);
    if (known?.serving === settled.serving) return known;
    const fresh: Watched = { serving: settled.serving, awakeSince: Date.now(), nextDue: undefined };
    this.watched.set(runner.deploymentId, fresh);
    return fresh;
  }

  private async consider(deploymentId: string, watched: Watched): Promise<void> {
    const { serving } = watched;
    if (watched.sleeping || watched.waking) return;
    const now = Date.now();
    if (serving.asleep()) {
      const due = watched.nextDue;
      if (due && due.at - now <= WAKE_AHEAD_MS) {
        await this.wake(deploymentId, watched, `Woke for ${due.what} due at ${new Date(due.at).toISOString()}`).catch(() => {});
      }
      return;
    }
    const idleMs = now - Math.max(watched.awakeSince, serving.lastRequestAt() ?? 0);
    // An unhealthy server is the supervisor's to restart (and cannot tell its queue); it sleeps once healthy and idle.
    if (idleMs < this.options.idleMs || serving.openRequests() > 0 || !serving.healthy()) return;
    const queue = await serving.queueDepth();
    if (queue.pending + queue.running > 0) return;
    const nextDue = earliest(
      queue.nextDelayedAt === undefined ? undefined : { at: queue.nextDelayedAt, what: "a delayed run" },
      await nextCronOf(serving),
    );
    // Not worth sleeping when it would wake again before it was asleep its idle time.
    if (nextDue && nextDue.at - Date.now() <= this.options.idleMs + WAKE_AHEAD_MS) return;
    // A request admitted while the queue and crons were read: it stays awake.
    if (serving.openRequests() > 0 || (serving.lastRequestAt() ?? 0) > now) return;
    await this.sleep(deploymentId, watched, idleMs, nextDue);
  }

  private async sleep(deploymentId: string, watched: Watched, idleMs: number, nextDue: Due | undefined): Promise<void> {
    const { serving } = watched;
    watched.nextDue = nextDue;
    watched.sleeping = serving.sleep(() => this.wake(deploymentId, watched, "Woke for a request"), nextDue);
    try {
      await watched.sleeping;
    } finally {
      watched.sleeping = undefined;
    }
    const seconds = Math.round(idleMs / 1000);
    const due = nextDue ? `; ${nextDue.what} wakes it before ${new Date(nextDue.at).toISOString()}` : "";
    const message = `Asleep after ${seconds} s without requests: the next request wakes it${due}`;
    this.options.logger.info({ deployment_id: deploymentId, revision_id: serving.revisionId }, "deployment asleep");
    await this.tell(deploymentId, serving.revisionId, {
      event: { type: "Normal", reason: "Slept", message: `Slept after ${seconds} s idle` },
      observed: { serving_revision_id: serving.revisionId, healthy: true, reason: "Sleeping", message, sleeping: true },
    });
  }

  /** Starts the deployment's servers again (one wake however many ask); rejects with the reason it could not. */
  private wake(deploymentId: string, watched: Watched, why: string): Promise<void> {
    watched.waking ??= this.wakeNow(deploymentId, watched, why).finally(() => {
      watched.waking = undefined;
    });
    return watched.waking;
  }

  private async wakeNow(deploymentId: string, watched: Watched, why: string): Promise<void> {
    const { serving } = watched;
    // A sleep under way stops its servers first.
    await watched.sleeping?.catch(() => {});
    const started = Date.now();
    try {
      await serving.wake(this.stopping.signal);
    } catch (error) {
      const message = `Waking failed: ${(error as Error).message}`;
      await this.tell(deploymentId, serving.revisionId, { event: { type: "Warning", reason: "WakeFailed", message } });
      throw error;
    }
    watched.awakeSince = Date.now();
    watched.nextDue = undefined;
    const tookMs = watched.awakeSince - started;
    this.options.logger.info({ deployment_id: deploymentId, revision_id: serving.revisionId, took_ms: tookMs }, why);
    await this.tell(deploymentId, serving.revisionId, {
      event: { type: "Normal", reason: "Woke", message: `${why} (its server started in ${tookMs} ms)` },
      observed: {
        serving_revision_id: serving.revisionId,
        healthy: true,
        reason: "Healthy",
        message: serving.summary,
        sleeping: false,
      },
    });
  }

  /** The revision's event and the deployment's observation, for the control plane; a failure is logged only. */
  private async tell(
    deploymentId: string,
    revisionId: string,
    what: { event: Parameters<ControlPlaneLink["recordEvent"]>[1]; observed?: ObservedDeployment },
  ): Promise<void> {
    const { link, logger } = this.options;
    try {
      await link.recordEvent(revisionId, what.event);
      if (what.observed) await link.report(deploymentId, { observed: what.observed });
    } catch (err) {
      logger.warn({ err, deployment_id: deploymentId }, "reporting a sleep or wake failed");
    }
  }
}

function earliest(...dues: (Due | undefined)[]): Due | undefined {
  return dues.reduce<Due | undefined>((first, due) => (due && (!first || due.at < first.at) ? due : first), undefined);
}

/** When the deployment's earliest enabled cron is next due, from its agent server. */
async function nextCronOf(serving: SupervisedServing): Promise<Due | undefined> {
  const replica = serving.apiReplicas().find((instance) => instance.healthy());
  if (!replica) throw new Error("no healthy API replica to read the crons from");
  const response = await fetch(new URL("/runs/crons/search", replica.url), {
    method: "POST",
    headers: { "x-api-key": serving.upstreamKey, "content-type": "application/json" },
    body: JSON.stringify({ enabled: true, limit: 1000, sort_by: "next_run_date", sort_order: "asc" }),
    signal: AbortSignal.timeout(READ_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`POST /runs/crons/search answered ${response.status}`);
  const crons = cronsBody.parse(await response.json());
  const dates = crons.flatMap((cron) => (cron.next_run_date ? [Date.parse(cron.next_run_date)] : []));
  return dates.length > 0 ? { at: Math.min(...dates), what: "a cron" } : undefined;
}
