import { buildTree, presentRun } from "./trace-views.js";
import type { RunFilter, TracedRunRecord, TracingProjectRecord, TracingStore } from "../storage/tracing-types.js";
import { isOwnProject, projectNotFound, reachesRun, runNotFound, type TracingScope } from "./scope.js";
import { Uuid } from "./wire.js";

export type RunListOptions = Omit<RunFilter, "project_id">;

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
    const resources = (await this.store.listRuns(scope.tenantId, { ...options, project_id: project.id })).map(presentRun);
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

  async threadUsage(scope: TracingScope, idOrName: string, threadId: string) {
    const project = await this.project(scope, idOrName);
    return {
      project_id: project.id,
      thread_id: threadId,
      ...(await this.store.threadUsage(scope.tenantId, project.id, threadId)),
    };
  }
}
