import type { RevisionStatus } from "@berth/listener-protocol";

/** Why a revision was made: a new deployment, a PATCH, `POST …/revisions`, a redeploy of an older one, a git push. */
export type RevisionCause = "create" | "patch" | "rebuild" | "redeploy" | "push";

interface RevisionEventBase {
  deployment: { id: string; name: string };
  revision: { id: string; number: number };
  status: RevisionStatus;
  message: string;
}

/** A revision was made, or its status moved (a listener's report, an interrupt). */
export type RevisionEvent =
  | (RevisionEventBase & { kind: "created"; cause: RevisionCause })
  | (RevisionEventBase & {
      kind: "status";
      previous: RevisionStatus;
      /** Where the deployment is served, when the move reports it (DEPLOYED). */
      url: string | null;
    });

export type RevisionEventListener = (event: RevisionEvent) => void;

/**
 * A deployment changed. `created`, `updated` (its configuration, or a
 * revision made or interrupted) and `deleted` change what its listener must
 * run; `reported` is a listener's report of its status; `listener_deleted`
 * tells that a deleted listener let go of its deleted deployments, which the
 * embedded listener then removes.
 */
export type DeploymentChange =
  | { change: "created" | "updated" | "deleted" | "reported"; deployment_id: string }
  | { change: "listener_deleted"; listener_id: string };

/** Lines were appended to a deployment's logs. */
export interface LogsAppended {
  deployment_id: string;
}

/** What each topic of the feed carries. */
export interface ChangeTopics {
  deployment: DeploymentChange;
  revision: RevisionEvent;
  logs: LogsAppended;
}

export type ChangeTopic = keyof ChangeTopics;

/** One message of the feed, with its topic. */
export type ChangeMessage = { [T in ChangeTopic]: { topic: T; change: ChangeTopics[T] } }[ChangeTopic];

export type ChangeHandler<T extends ChangeTopic> = (change: ChangeTopics[T]) => void;

/**
 * The control plane's changes, told where they are committed (deployments
 * made and changed, revisions made and moved, log lines appended) to
 * whoever follows them: revision long-polls, log streams, the CLI's terminal
 * lines and the embedded listener. A change is published after it is
 * stored, so a subscriber that reads on hearing it sees it. Publishing is
 * best effort: followers also read again now and then (`recheckMs`).
 */
export interface ChangeFeed {
  publish<T extends ChangeTopic>(topic: T, change: ChangeTopics[T]): void;
  /** Calls `handler` with every change of the topic from now on; returns what stops it. */
  subscribe<T extends ChangeTopic>(topic: T, handler: ChangeHandler<T>): () => void;
  /** Changes published by the other control-plane processes sharing the database are heard too (PostgreSQL NOTIFY). */
  readonly hearsOtherProcesses: boolean;
  close(): Promise<void>;
}

/** How often a follower reads again when the feed hears other processes: only a dropped connection loses changes. */
const HEARD_RECHECK_MS = 5000;

/**
 * How often a follower reads again for changes the feed did not carry:
 * `localMs` when other control-plane processes' changes are not heard
 * (SQLite), seldom when they are.
 */
export function recheckMs(feed: ChangeFeed, localMs: number): number {
  return feed.hearsOtherProcesses ? Math.max(localMs, HEARD_RECHECK_MS) : localMs;
}

/** The feed of one process. */
export class InProcessChangeFeed implements ChangeFeed {
  private readonly handlers: { [T in ChangeTopic]: Set<ChangeHandler<T>> } = {
    deployment: new Set(),
    revision: new Set(),
    logs: new Set(),
  };

  readonly hearsOtherProcesses: boolean = false;

  /** A handler that throws does not fail the change it is told of, nor keep it from the other handlers. */
  publish<T extends ChangeTopic>(topic: T, change: ChangeTopics[T]): void {
    for (const handler of [...this.handlers[topic]]) {
      try {
        handler(change);
      } catch {
        // telling is best effort
      }
    }
  }

  subscribe<T extends ChangeTopic>(topic: T, handler: ChangeHandler<T>): () => void {
    const handlers = this.handlers[topic] as Set<ChangeHandler<T>>;
    handlers.add(handler);
    return () => void handlers.delete(handler);
  }

  async close(): Promise<void> {
    for (const handlers of Object.values(this.handlers)) handlers.clear();
  }
}

/** Which changes of each topic wake a follower. */
export type WakeFilter = { [T in ChangeTopic]?: (change: ChangeTopics[T]) => boolean };

/** Wakes one follower (a long-poll, a log stream) at the changes it follows. */
export interface Wakeups {
  /** Resolves at a change since the last call (at once if one came meanwhile), after `ms`, or when `signal` aborts. */
  next(ms: number): Promise<void>;
  /** Stops following. */
  close(): void;
}

/**
 * Follows the changes `filter` picks. A change while the follower reads
 * (not waiting) is remembered, so its next wait ends at once.
 */
export function wakeups(feed: ChangeFeed, filter: WakeFilter, signal?: AbortSignal): Wakeups {
  let pending = false;
  let wake: (() => void) | undefined;
  const onChange = () => {
    pending = true;
    wake?.();
  };
  const stops = (Object.keys(filter) as ChangeTopic[]).map((topic) =>
    feed.subscribe(topic, (change: ChangeTopics[typeof topic]) => {
      if ((filter[topic] as (change: ChangeTopics[typeof topic]) => boolean)(change)) onChange();
    }),
  );
  signal?.addEventListener("abort", onChange);
  return {
    next: (ms) =>
      new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          wake = undefined;
          pending = false;
          resolve();
        };
        const timer = setTimeout(done, ms);
        if (pending || signal?.aborted) done();
        else wake = done;
      }),
    close: () => {
      for (const stop of stops) stop();
      signal?.removeEventListener("abort", onChange);
      wake?.();
    },
  };
}
