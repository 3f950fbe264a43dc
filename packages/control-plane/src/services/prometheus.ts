import { DEPLOYMENT_STATUSES, REVISION_STATUSES, type RevisionStatus } from "@berth/listener-protocol";
import type { Logger } from "pino";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { ControlPlaneStorage, RevisionEventRecord, StatusCounts } from "../storage/types.js";
import type { ChangeFeed, ChangeTopic, ChangeTopics } from "./change-feed.js";

/** Every series the control plane exposes about itself starts with this. */
export const METRIC_PREFIX = "berth_control_plane_";

/** Builds take seconds (a cached image) to many minutes (a fresh dependency install). */
const BUILD_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600];
/** API calls, up to the minute-long long-polls and streams. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** How a build ended, from the status its revision left BUILDING for. */
const BUILD_RESULTS = ["succeeded", "failed", "interrupted"] as const;
export type BuildResult = (typeof BUILD_RESULTS)[number];

function buildResultOf(status: RevisionStatus): BuildResult {
  if (status.endsWith("_FAILED")) return "failed";
  if (status === "INTERRUPTED" || status === "SKIPPED" || status === "UNKNOWN") return "interrupted";
  return "succeeded";
}

/**
 * Seconds from the move into BUILDING to the move out of it, from the
 * revision's stored timeline (so a build resumed by a restarted listener is
 * measured from its first entry); undefined when the timeline lacks either.
 */
export function buildSeconds(events: RevisionEventRecord[]): number | undefined {
  const moves = events.filter((event) => event.type === null);
  let last = moves.length - 1;
  while (last >= 0 && moves[last]!.status !== "BUILDING") last -= 1;
  const exit = moves[last + 1];
  if (last < 0 || !exit) return undefined;
  let first = last;
  while (first > 0 && moves[first - 1]!.status === "BUILDING") first -= 1;
  const seconds = (Date.parse(exit.at) - Date.parse(moves[first]!.at)) / 1000;
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

/**
 * The control plane's own Prometheus metrics, on a registry of its own (so
 * that several control planes in one process do not collide): deployments
 * and revisions by status (counted from storage at each scrape), builds
 * finished and their durations (since this process started), API latencies
 * by route template, and Node's process metrics.
 */
export class PrometheusMetrics {
  readonly registry = new Registry();
  private readonly requests: Histogram<"method" | "route" | "status_code">;
  private readonly builds: Counter<"result">;
  private readonly buildDurations: Histogram<"result">;

  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly logger: Logger,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
    statusGauge(
      registers,
      "deployments",
      "Deployments by status, across workspaces (deleted ones until purged)",
      DEPLOYMENT_STATUSES,
      () => storage.deployments.countByStatus(),
    );
    statusGauge(registers, "revisions", "Revisions by status, across workspaces", REVISION_STATUSES, () =>
      storage.revisions.countByStatus(),
    );
    this.builds = new Counter({
      name: `${METRIC_PREFIX}builds_total`,
      help: "Builds finished since this process started, by result (succeeded, failed, interrupted)",
      labelNames: ["result"],
      registers,
    });
    this.buildDurations = new Histogram({
      name: `${METRIC_PREFIX}build_duration_seconds`,
      help: "Build durations (BUILDING to the next status) of builds finished since this process started",
      labelNames: ["result"],
      buckets: BUILD_BUCKETS,
      registers,
    });
    // Every result from 0, so that rate() and increase() see the first build of each.
    for (const result of BUILD_RESULTS) {
      this.builds.inc({ result }, 0);
      this.buildDurations.zero({ result });
    }
    this.requests = new Histogram({
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: "API request durations by method, route template and status code",
      labelNames: ["method", "route", "status_code"],
      buckets: REQUEST_BUCKETS,
      registers,
    });
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  /** One API request answered; `route` is the route's template (bounded label values), "unmatched" for none. */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
    this.requests.observe({ method, route, status_code: String(statusCode) }, seconds);
  }

  /**
   * The feed as the services that move revisions publish to: a move out of
   * BUILDING published in this process is a build finished here (moves heard
   * from other processes sharing the database are theirs to count).
   */
  counting(feed: ChangeFeed): ChangeFeed {
    return {
      publish: <T extends ChangeTopic>(topic: T, change: ChangeTopics[T]) => {
        feed.publish(topic, change);
        if (topic !== "revision") return;
        const event = change as ChangeTopics["revision"];
        if (event.kind === "status" && event.previous === "BUILDING" && event.status !== "BUILDING") {
          void this.buildFinished(event.revision.id, event.status);
        }
      },
      subscribe: (topic, handler) => feed.subscribe(topic, handler),
      get hearsOtherProcesses() {
        return feed.hearsOtherProcesses;
      },
      close: () => feed.close(),
    };
  }

  private async buildFinished(revisionId: string, status: RevisionStatus): Promise<void> {
    const result = buildResultOf(status);
    this.builds.inc({ result });
    try {
      const seconds = buildSeconds(await this.storage.revisions.events(revisionId));
      if (seconds !== undefined) this.buildDurations.observe({ result }, seconds);
    } catch (error) {
      this.logger.warn({ err: error, revision_id: revisionId }, "could not read a finished build's timeline for its duration");
    }
  }
}

/** A gauge of rows per status, read from storage when scraped; known statuses show 0 rather than no series. */
function statusGauge(
  registers: Registry[],
  what: string,
  help: string,
  known: readonly string[],
  count: () => Promise<StatusCounts>,
): void {
  const gauge: Gauge<"status"> = new Gauge({
    name: `${METRIC_PREFIX}${what}`,
    help,
    labelNames: ["status"],
    registers,
    async collect() {
      const counts = await count();
      gauge.reset();
      for (const status of new Set([...known, ...Object.keys(counts)])) gauge.set({ status }, counts[status] ?? 0);
    },
  });
}
