import type { Logger } from "../../logger.js";
import { type RunRepository, type RunStatus, TERMINAL_RUN_STATUSES } from "../../storage/types.js";
import type { InProcessBroker } from "./in-process-broker.js";

/** A run executing in another process, followed here through its event log. */
interface Follower {
  /** The last logged event handed to local observers. */
  delivered: number;
  /** Finding where the log ends when the first observer came. */
  ready: Promise<void>;
  /** Then reads and deliveries, one at a time and in order. */
  chain: Promise<void>;
  /** A catch-up is queued, not started: further "flushed" notices need no other. */
  catchUpQueued: boolean;
}

/**
 * The runs executing elsewhere that this process's observers follow, when no
 * live events cross processes (SignalBroker): told that a batch of a run's
 * events reached the log, it reads the log past what it delivered and hands
 * the events to the local broker's observers.
 */
export class LogFollowers {
  private readonly followers = new Map<string, Follower>();

  constructor(
    private readonly runs: RunRepository,
    private readonly local: InProcessBroker,
    private readonly logger?: Logger,
  ) {}

  /**
   * Follows a run from where its log ends now; resolves once that is known,
   * so a caller reading the log afterwards misses nothing between its read
   * and the next notice.
   */
  async follow(runId: string): Promise<void> {
    let follower = this.followers.get(runId);
    if (!follower) {
      const created: Follower = { delivered: -1, ready: Promise.resolve(), chain: Promise.resolve(), catchUpQueued: false };
      this.followers.set(runId, (follower = created));
      this.enqueue(runId, created, async () => void (created.delivered = await this.runs.lastEventSeq(runId)));
      created.ready = created.chain;
    }
    await follower.ready;
  }

  /** Nobody here observes the run any more. */
  forget(runId: string): void {
    this.followers.delete(runId);
  }

  /** A batch of the run's events reached the log. */
  flushed(runId: string): void {
    const follower = this.followers.get(runId);
    if (!follower || follower.catchUpQueued) return;
    follower.catchUpQueued = true;
    this.enqueue(runId, follower, () => {
      follower.catchUpQueued = false;
      return this.catchUp(runId, follower);
    });
  }

  /** The run ended: its observers get the rest of the log, then the end. */
  ended(runId: string, status: RunStatus): void {
    const follower = this.followers.get(runId);
    if (follower) this.enqueue(runId, follower, () => this.end(runId, follower, status));
  }

  /** Notices may have been lost: takes what the log holds, and ends the runs that ended meanwhile. */
  resync(): void {
    for (const [runId, follower] of this.followers) {
      this.enqueue(runId, follower, async () => {
        await this.catchUp(runId, follower);
        const run = await this.runs.get(runId);
        if (!run || TERMINAL_RUN_STATUSES.has(run.status)) await this.end(runId, follower, run?.status ?? "interrupted");
      });
    }
  }

  private enqueue(runId: string, follower: Follower, task: () => Promise<void>): void {
    const failed = (err: unknown) => this.logger?.error({ err, run_id: runId }, "following a run through its event log failed");
    follower.chain = follower.chain.then(task).catch(failed);
  }

  /** Hands local observers what the log holds past what they got. */
  private async catchUp(runId: string, follower: Follower): Promise<void> {
    for (const event of await this.runs.readEvents(runId, follower.delivered)) {
      if (this.followers.get(runId) !== follower) return; // nobody observes it any more
      follower.delivered = event.seq;
      this.local.deliver(runId, event);
    }
  }

  /** Ends the observers' stream even when the database fails meanwhile (better than hanging). */
  private async end(runId: string, follower: Follower, status: RunStatus): Promise<void> {
    let output: unknown = null;
    try {
      await this.catchUp(runId, follower);
      output = (await this.runs.get(runId))?.output ?? null;
    } catch (err) {
      this.logger?.error({ err, run_id: runId }, "reading an ended run failed");
    }
    if (this.followers.get(runId) !== follower) return;
    this.followers.delete(runId);
    this.local.end(runId, { status, output });
  }
}
