import { NotFoundError } from "@berth/service-kit";
import { FINAL_REVISION_STATUSES, type RevisionStatus } from "@berth/listener-protocol";
import type { ControlPlaneStorage, LogEntry, LogFilter, LogKind, LogRecord } from "../storage/types.js";
import { notFound } from "./deployments.js";
import { type ChangeFeed, recheckMs, wakeups } from "./change-feed.js";

export type LogQuery = Omit<LogFilter, "deployment_id" | "revision_id" | "kind">;

/** One log line as the log API returns it. */
export interface LogLine {
  id: string;
  timestamp: string;
  level: string;
  message: string;
}

/** What a followed log yields: its lines, each with how many lines came up to it; a build log ends with its revision's final status. */
export type LogStreamItem =
  | { kind: "line"; count: number; line: LogLine }
  | { kind: "end"; status: RevisionStatus; status_message: string };

/** A followed log reads again this often, for lines another control-plane process appended unheard (SQLite). */
const RECHECK_MS = 1000;
const PAGE = 1000;

function lineOf({ id, timestamp, level, message }: LogRecord): LogLine {
  return { id: String(id), timestamp, level, message };
}

/** Build logs and server (deploy) logs of a deployment's revisions, as listeners reported them. */
export class LogService {
  constructor(
    private readonly storage: ControlPlaneStorage,
    private readonly changes: ChangeFeed,
  ) {}

  /** Appends lines a listener reported, and wakes the streams of their deployments. */
  async append(entries: LogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.storage.logs.append(entries);
    for (const deploymentId of new Set(entries.map((entry) => entry.deployment_id)))
      this.changes.publish("logs", { deployment_id: deploymentId });
  }

  async query(tenantId: string, deploymentId: string, revisionId: string | undefined, kind: LogKind, query: LogQuery) {
    await this.check(tenantId, deploymentId, revisionId);
    const logs = await this.storage.logs.query({ ...query, deployment_id: deploymentId, revision_id: revisionId, kind });
    return {
      logs: logs.map(lineOf),
      next_offset: logs.length === query.limit ? query.offset + logs.length : null,
    };
  }

  /**
   * The lines after the first `offset`, oldest first, then each line as it
   * is appended, until `signal` aborts; a revision's build log ends once the
   * revision is final and every line was given. Unknown ids fail before the
   * first line.
   */
  async follow(
    tenantId: string,
    deploymentId: string,
    revisionId: string | undefined,
    kind: LogKind,
    offset: number,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<LogStreamItem>> {
    await this.check(tenantId, deploymentId, revisionId);
    const endsWith = kind === "build" && revisionId ? revisionId : undefined;
    return this.lines({ deployment_id: deploymentId, revision_id: revisionId, kind }, offset, endsWith, signal);
  }

  private async *lines(
    filter: Pick<LogFilter, "deployment_id" | "revision_id" | "kind">,
    after: number,
    endsWith: string | undefined,
    signal: AbortSignal,
  ): AsyncGenerator<LogStreamItem> {
    const deploymentId = filter.deployment_id;
    // Lines appended, or a revision moved: one that became final ends its build log's streams.
    const changes = wakeups(
      this.changes,
      { logs: (change) => change.deployment_id === deploymentId, revision: (event) => event.deployment.id === deploymentId },
      signal,
    );
    let count = after;
    try {
      while (!signal.aborted) {
        // The status is read before the lines: a listener ships every line before it makes a revision final.
        const final = endsWith ? await this.finalRevision(endsWith) : undefined;
        for (;;) {
          const page = await this.storage.logs.query({ ...filter, order: "asc", limit: PAGE, offset: count });
          for (const record of page) yield { kind: "line", count: ++count, line: lineOf(record) };
          if (page.length < PAGE) break;
        }
        if (final) {
          yield { kind: "end", status: final.status, status_message: final.status_message };
          return;
        }
        await changes.next(recheckMs(this.changes, RECHECK_MS));
      }
    } finally {
      changes.close();
    }
  }

  private async finalRevision(revisionId: string) {
    const revision = await this.storage.revisions.getAny(revisionId);
    return revision && FINAL_REVISION_STATUSES.includes(revision.status) ? revision : undefined;
  }

  private async check(tenantId: string, deploymentId: string, revisionId: string | undefined): Promise<void> {
    if (!(await this.storage.deployments.get(tenantId, deploymentId))) throw notFound(deploymentId);
    if (revisionId && !(await this.storage.revisions.get(tenantId, deploymentId, revisionId))) {
      throw new NotFoundError(`Revision ${revisionId} not found`);
    }
  }
}
