import { ForbiddenError, NotFoundError } from "@berth/service-kit";
import { randomUUID } from "node:crypto";
import type { Caller } from "../api-keys/authenticate.js";
import type { TracedRunRecord, TracingProjectRecord, TracingStore } from "../storage/tracing-types.js";
import type { DeploymentStore } from "../storage/types.js";

/**
 * What a tracing request may reach: the caller's workspace, and for a
 * deployment's tracing key only its deployment's project (the project named
 * like the deployment that no other deployment holds). Everything outside is
 * unknown to such a key: 404 on reads, refused on writes.
 */
export interface TracingScope {
  tenantId: string;
  /** The deployment whose key this is; null for a workspace key (the whole workspace). */
  deployment: { id: string; name: string } | null;
}

/** The scope of an authenticated caller: a tracing key's deployment is looked up (403 once it is gone). */
export async function tracingScopeOf(caller: Caller, deployments: Pick<DeploymentStore, "getAny">): Promise<TracingScope> {
  if (!caller.tracingOnly || !caller.deploymentId) return { tenantId: caller.tenantId, deployment: null };
  const deployment = await deployments.getAny(caller.deploymentId);
  if (!deployment || deployment.tenant_id !== caller.tenantId) throw new ForbiddenError("API key of a deleted deployment");
  return { tenantId: caller.tenantId, deployment: { id: deployment.id, name: deployment.name } };
}

/** Is this project the scoped deployment's own? (A project named like it but held by another deployment is not.) */
export function isOwnProject(scope: TracingScope, project: TracingProjectRecord): boolean {
  const { deployment } = scope;
  if (!deployment) return true;
  return project.name === deployment.name && (project.deployment_id === null || project.deployment_id === deployment.id);
}

/** Is this run in a project the scope reaches? */
export async function reachesRun(store: TracingStore, scope: TracingScope, run: TracedRunRecord): Promise<boolean> {
  if (!scope.deployment) return true;
  const project = await store.projectById(scope.tenantId, run.project_id);
  return project !== undefined && isOwnProject(scope, project);
}

/**
 * The project a deployment's tracing key writes into, created when missing
 * (its run may name its project, or none). 403 when a run names another
 * project, or its deployment's name is held by another deployment's project.
 */
export async function ensureOwnProject(
  store: TracingStore,
  scope: TracingScope & { deployment: NonNullable<TracingScope["deployment"]> },
  named: string | null | undefined,
  now: string,
): Promise<TracingProjectRecord> {
  const { name } = scope.deployment;
  if (named && named !== name) {
    throw new ForbiddenError(`This API key belongs to a deployment and may only trace into its project "${name}"`);
  }
  const project = await store.ensureProject({
    id: randomUUID(),
    tenant_id: scope.tenantId,
    name,
    deployment_id: null,
    created_at: now,
  });
  if (!isOwnProject(scope, project)) {
    throw new ForbiddenError(`Tracing project "${name}" belongs to another deployment`);
  }
  return project;
}

/** Refuses feedback or an operation on a stored run of another project (a run not ingested yet may be anyone's). */
export async function checkRunWritable(store: TracingStore, scope: TracingScope, runId: string): Promise<void> {
  if (!scope.deployment) return;
  const run = await store.getRun(scope.tenantId, runId);
  if (run && !(await reachesRun(store, scope, run))) throw foreignRun(runId);
}

export const foreignRun = (runId: string) =>
  new ForbiddenError(
    `Run ${runId} is not in this API key's tracing project: a deployment's key traces into its own project only`,
  );

/** A project the scope does not reach reads like one that does not exist. */
export const projectNotFound = (idOrName: string) => new NotFoundError(`Tracing project ${idOrName} not found`);
export const runNotFound = (runId: string) => new NotFoundError(`Run ${runId} not found`);
