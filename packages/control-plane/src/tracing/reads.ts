import { buildTree, dottedDepth, presentRun, presentSpan } from "./trace-views.js";
import type { RunFilter, RunStatus, TracedRunRecord, TracingProjectRecord, TracingStore } from "../storage/tracing-types.js";
import { isOwnProject, projectNotFound, reachesRun, runNotFound, type TracingScope } from "./scope.js";
import { Uuid } from "./wire.js";

export type RunListOptions = Omit<RunFilter, "project_id" | "statuses"> & { status?: RunStatus; error?: boolean };

/**
 * The read API: every lookup is within the caller's workspace (and a
 * deployment's key within its own project), so anything else is a 404.
 */
export class TracingReader {
  constructor(private readonly store: TracingStore) {}

  /** A project by id or, failing that, by name (names may look like anything, ids are UUIDs). */
  async project(scope: TracingScope, idOrName: string): Promise<TracingProjectRecord> {
    const { tenantId } = scope;
    const project =
      (Uuid.safeParse(idOrName).success ? await this.store.projectById(tenantId, idOrName) : undefined) ??
      (await this.store.projectByName(tenantId, idOrName));
    if (!project || !isOwnProject(scope, project)) throw projectNotFound(idOrName);
    return project;
  }

  async listRuns(scope: TracingScope, idOrName: string, options: RunListOptions) {
    const project = await this.project(scope, idOrName);
    const { error, status, ...filter } = options;
    // `error` is a shorthand: true the runs with an error, false the others; with a status, both must hold.
    const statuses = (["success", "error", "pending"] as const).filter(
      (each) => (status === undefined || each === status) && (error === undefined || (each === "error") === error),
    );
    if (statuses.length === 0) return { resources: [], offset: options.offset };
    const filtered: RunFilter = { ...filter, project_id: project.id, ...(statuses.length < 3 && { statuses }) };
    const resources = (await this.store.listRuns(scope.tenantId, filtered)).map(presentRun);
    return { resources, offset: options.offset + resources.length };
  }

  async run(scope: TracingScope, runId: string): Promise<TracedRunRecord> {
    const run = await this.store.getRun(scope.tenantId, runId);
    if (!run || !(await reachesRun(this.store, scope, run))) throw runNotFound(runId);
    return run;
  }

  /**
   * The run with all its descendants nested in `child_runs`, in dotted order.
   * Only runs of the root's project: a trace id reused by a run of another
   * project does not graft that run onto this tree.
   */
  async tree(scope: TracingScope, runId: string) {
    const root = await this.run(scope, runId);
    const runs = await this.store.traceRuns(scope.tenantId, root.trace_id);
    return buildTree(
      root,
      runs.filter((run) => run.project_id === root.project_id),
    );
  }

  /**
   * A page of the spans of the run's subtree (the whole trace for a root), in
   * dotted order, without inputs, outputs or events: a trace of thousands of
   * runs is read page by page, each run's fields on demand (GET /runs/{id}).
   */
  async spans(scope: TracingScope, runId: string, page: { limit: number; offset: number }) {
    const root = await this.run(scope, runId);
    const { spans, total } = await this.store.traceSpans(scope.tenantId, {
      project_id: root.project_id,
      trace_id: root.trace_id,
      root_dotted_order: root.parent_run_id === null ? null : root.dotted_order,
      ...page,
    });
    const rootDepth = dottedDepth(root.dotted_order);
    return { resources: spans.map((span) => presentSpan(span, rootDepth)), offset: page.offset + spans.length, total };
  }

  async threadUsage(scope: TracingScope, idOrName: string, threadId: string) {
    const project = await this.project(scope, idOrName);
    return {
      project_id: project.id,
      thread_id: threadId,
      ...(await this.store.threadUsage(scope.tenantId, project.id, threadId)),
    };
  }
}
