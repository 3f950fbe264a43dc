import { NotFoundError } from "@berth/service-kit";
import { buildTree, presentRun } from "./trace-views.js";
import type { RunFilter, TracingProjectRecord, TracingStore } from "../storage/tracing-types.js";
import { Uuid } from "./wire.js";

export type RunListOptions = Omit<RunFilter, "project_id">;

/** The read API: every lookup is within the caller's workspace, so another workspace's project or run is a 404. */
export class TracingReader {
  constructor(private readonly store: TracingStore) {}

  /** A project by id or, failing that, by name (names may look like anything, ids are UUIDs). */
  async project(tenantId: string, idOrName: string): Promise<TracingProjectRecord> {
    const project =
      (Uuid.safeParse(idOrName).success ? await this.store.projectById(tenantId, idOrName) : undefined) ??
      (await this.store.projectByName(tenantId, idOrName));
    if (!project) throw new NotFoundError(`Tracing project ${idOrName} not found`);
    return project;
  }

  async listRuns(tenantId: string, idOrName: string, options: RunListOptions) {
    const project = await this.project(tenantId, idOrName);
    const resources = (await this.store.listRuns(tenantId, { ...options, project_id: project.id })).map(presentRun);
    return { resources, offset: options.offset + resources.length };
  }

  async run(tenantId: string, runId: string) {
    const run = await this.store.getRun(tenantId, runId);
    if (!run) throw new NotFoundError(`Run ${runId} not found`);
    return run;
  }

  /** The run with all its descendants nested in `child_runs`, in dotted order. */
  async tree(tenantId: string, runId: string) {
    const root = await this.run(tenantId, runId);
    return buildTree(root, await this.store.traceRuns(tenantId, root.trace_id));
  }

  async threadUsage(tenantId: string, idOrName: string, threadId: string) {
    const project = await this.project(tenantId, idOrName);
    return { project_id: project.id, thread_id: threadId, ...(await this.store.threadUsage(tenantId, project.id, threadId)) };
  }
}
