import { randomUUID } from "node:crypto";
import { feedbackRecord } from "./feedback-record.js";
import type { IngestBatch } from "./multipart-ops.js";
import { applyRunOp, type RunOp } from "./run-merge.js";
import {
  checkRunWritable,
  ensureOwnProject,
  foreignRun,
  isOwnProject,
  projectNotFound,
  reachesRun,
  type TracingScope,
} from "./scope.js";
import type { TracedRunRecord, TracingStore } from "../storage/tracing-types.js";
import type { RunUpdate } from "./wire.js";

/** Where a run goes when its client names no project (LangSmith's default project name). */
export const DEFAULT_PROJECT = "default";

type WireOp = { kind: "post" | "patch"; run: RunUpdate & { id: string } };

/**
 * Ingestion: every route (POST /runs, PATCH /runs/{id}, /runs/batch,
 * /runs/multipart) comes down to a batch of posts, patches and feedback,
 * merged into the stored runs in one atomic step per batch.
 */
export class TracingIngest {
  constructor(private readonly store: TracingStore) {}

  async ingest(scope: TracingScope, batch: IngestBatch): Promise<void> {
    const { tenantId } = scope;
    const now = new Date().toISOString();
    // Feedback on another project's run is refused before anything of the batch is written.
    for (const feedback of batch.feedback) if (feedback.run_id) await checkRunWritable(this.store, scope, feedback.run_id);
    const ops: WireOp[] = [
      ...batch.creates.map((run) => ({ kind: "post" as const, run: { ...run, id: run.id ?? randomUUID() } })),
      ...batch.updates.map((run) => ({ kind: "patch" as const, run: { ...run, id: run.id ?? randomUUID() } })),
    ];
    if (ops.length > 0) {
      const projects = await this.projectsOf(scope, ops, now);
      const traces = await this.tracesOf(scope, ops);
      const runOps = ops.map(
        ({ kind, run }): RunOp => ({
          kind,
          id: run.id,
          project_id: projects.get(projectKey(run))!,
          trace_id: traces.get(run.id)!,
          fields: run,
        }),
      );
      const ids = [...new Set(runOps.map((op) => op.id))];
      const own = new Set(projects.values());
      await this.store.upsertRuns(tenantId, ids, (current) => {
        // Checked on the locked rows: a deployment's key never changes a run of another project.
        if (scope.deployment) {
          for (const run of current.values()) if (!own.has(run.project_id)) throw foreignRun(run.id);
        }
        const changed = new Map<string, TracedRunRecord>();
        for (const op of runOps) changed.set(op.id, applyRunOp(tenantId, changed.get(op.id) ?? current.get(op.id), op, now));
        return [...changed.values()];
      });
    }
    if (batch.feedback.length > 0) {
      await this.store.addFeedback(batch.feedback.map((feedback) => feedbackRecord(tenantId, feedback, "api", now)));
    }
  }

  /**
   * Each operation's project id: by `session_id` (it must be the workspace's), else by name, created when missing.
   * A deployment's key: its own project only (a run naming none goes there too).
   */
  private async projectsOf(scope: TracingScope, ops: WireOp[], now: string): Promise<Map<string, string>> {
    const { tenantId } = scope;
    const resolved = new Map<string, string>();
    for (const { run } of ops) {
      const key = projectKey(run);
      if (resolved.has(key)) continue;
      if (run.session_id) {
        const project = await this.store.projectById(tenantId, run.session_id);
        if (!project || !isOwnProject(scope, project)) throw projectNotFound(run.session_id);
        resolved.set(key, project.id);
      } else if (scope.deployment) {
        resolved.set(
          key,
          (await ensureOwnProject(this.store, { ...scope, deployment: scope.deployment }, run.session_name, now)).id,
        );
      } else {
        const name = run.session_name || DEFAULT_PROJECT;
        const project = await this.store.ensureProject({
          id: randomUUID(),
          tenant_id: tenantId,
          name,
          deployment_id: null,
          created_at: now,
        });
        resolved.set(key, project.id);
      }
    }
    return resolved;
  }

  /** Each run's trace: as sent, else its parent's (in the batch or stored), else the run is a root and its own trace. */
  private async tracesOf(scope: TracingScope, ops: WireOp[]): Promise<Map<string, string>> {
    const traces = new Map<string, string>();
    for (const { run } of ops) if (run.trace_id) traces.set(run.id, run.trace_id);
    for (const { run } of ops) {
      if (traces.has(run.id)) continue;
      const parent = run.parent_run_id;
      const parentTrace = parent ? (traces.get(parent) ?? (await this.reachedRun(scope, parent))?.trace_id) : undefined;
      traces.set(run.id, parentTrace ?? (await this.reachedRun(scope, run.id))?.trace_id ?? run.id);
    }
    return traces;
  }

  /** A stored run the scope reaches (another project's run is unknown to a deployment's key). */
  private async reachedRun(scope: TracingScope, runId: string) {
    const run = await this.store.getRun(scope.tenantId, runId);
    return run && (await reachesRun(this.store, scope, run)) ? run : undefined;
  }
}

function projectKey(run: RunUpdate): string {
  return run.session_id ? `id:${run.session_id}` : `name:${run.session_name || DEFAULT_PROJECT}`;
}
