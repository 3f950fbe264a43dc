import type { Condition, ObservedDeployment } from "@berth/listener-protocol";
import {
  deploymentConditions,
  deploymentStatusOf,
  moveEventOf,
  revisionConditions,
  type ServingState,
} from "../domain/status-conditions.js";
import type { ControlPlaneStorage, DeploymentRecord, RevisionRecord } from "../storage/types.js";
import { presentRevision } from "./deployment-views.js";

export type Revision = ReturnType<typeof presentRevision>;

/*
 * The conditions of deployments and revisions (domain/status-conditions.ts):
 * recorded when a listener moves a revision or reports what runs, and derived
 * again from the records whenever they are read, so they agree with the
 * statuses the API shows even when a status moved without a listener (a
 * PATCH superseding revisions, an interrupt).
 */

async function servingState(
  storage: ControlPlaneStorage,
  deployment: DeploymentRecord,
  known: readonly RevisionRecord[],
  observed?: ObservedDeployment | null,
): Promise<ServingState> {
  const activeId = deployment.active_revision_id;
  const active = activeId
    ? (known.find((revision) => revision.id === activeId) ?? (await storage.revisions.getAny(activeId)))
    : undefined;
  return {
    active_revision_id: activeId,
    active_number: active?.number ?? null,
    observed:
      observed === undefined ? ((await storage.conditions.observedOf([deployment.id])).get(deployment.id) ?? null) : observed,
  };
}

/**
 * Derives and records the conditions of a deployment, of its active revision
 * and of `revisionIds`, and the deployment's status from them. `observed`
 * replaces the listener's last observation (null: none since a new revision
 * became active); undefined keeps it.
 */
export async function recordConditions(
  storage: ControlPlaneStorage,
  deploymentId: string,
  revisionIds: readonly (string | null | undefined)[],
  observed: ObservedDeployment | null | undefined,
  now: string,
): Promise<void> {
  const deployment = await storage.deployments.getAny(deploymentId);
  const latest = await storage.revisions.latest(deploymentId);
  if (!deployment || !latest) return;
  const ids = [...new Set([deployment.active_revision_id, ...revisionIds].filter((id): id is string => !!id))];
  const revisions = (await Promise.all(ids.map((id) => storage.revisions.getAny(id)))).filter(
    (revision): revision is RevisionRecord => revision?.deployment_id === deploymentId,
  );
  const serving = await servingState(storage, deployment, revisions, observed);
  const recorded = await storage.conditions.conditionsOf([deploymentId, ...revisions.map((revision) => revision.id)]);
  const conditions = deploymentConditions(latest, serving, recorded.get(deploymentId) ?? [], now);
  await storage.conditions.record(deploymentId, {
    status: deploymentStatusOf(conditions),
    conditions,
    observed,
    revisions: revisions.map((revision) => ({
      id: revision.id,
      conditions: revisionConditions(revision, serving, recorded.get(revision.id) ?? [], now),
    })),
  });
}

/** The conditions of a deployment's revisions, by id, as the API shows them. */
async function conditionsOfRevisions(
  storage: ControlPlaneStorage,
  deployment: DeploymentRecord,
  revisions: readonly RevisionRecord[],
): Promise<Map<string, Condition[]>> {
  const serving = await servingState(storage, deployment, revisions);
  const recorded = await storage.conditions.conditionsOf(revisions.map((revision) => revision.id));
  return new Map(
    revisions.map((revision) => [
      revision.id,
      // A condition changed since it was recorded changed with the revision's last move.
      revisionConditions(revision, serving, recorded.get(revision.id) ?? [], revision.updated_at),
    ]),
  );
}

/**
 * Deployments' conditions as the API shows them, each beside the revision it
 * is shown with: the recorded conditions and observations of all of them in
 * two reads, however many there are.
 */
export async function conditionsOfDeployments(
  storage: ControlPlaneStorage,
  shown: readonly { deployment: DeploymentRecord; latest: RevisionRecord }[],
): Promise<Condition[][]> {
  const ids = shown.map(({ deployment }) => deployment.id);
  const [recorded, observed] = await Promise.all([storage.conditions.conditionsOf(ids), storage.conditions.observedOf(ids)]);
  return Promise.all(
    shown.map(async ({ deployment, latest }) => {
      const serving = await servingState(storage, deployment, [latest], observed.get(deployment.id) ?? null);
      return deploymentConditions(latest, serving, recorded.get(deployment.id) ?? [], deployment.updated_at);
    }),
  );
}

/** Revisions of a deployment as the API shows them, with their conditions. */
export async function presentRevisionsWithConditions(
  storage: ControlPlaneStorage,
  deployment: DeploymentRecord,
  revisions: readonly RevisionRecord[],
): Promise<Revision[]> {
  const conditions = await conditionsOfRevisions(storage, deployment, revisions);
  return revisions.map((revision) => presentRevision(revision, conditions.get(revision.id) ?? []));
}

/** A revision as the API shows it, with its conditions. */
export async function presentRevisionWithConditions(
  storage: ControlPlaneStorage,
  deployment: DeploymentRecord,
  revision: RevisionRecord,
): Promise<Revision> {
  const conditions = await conditionsOfRevisions(storage, deployment, [revision]);
  return presentRevision(revision, conditions.get(revision.id) ?? []);
}

/** A revision's timeline as the API shows it: its moves and the events recorded beside them, oldest first. */
export async function timelineOf(storage: ControlPlaneStorage, revisionId: string) {
  const events = await storage.revisions.events(revisionId);
  return events.map(({ at, status, message, type, reason }) => {
    const move = moveEventOf(status);
    return { at, status, message, type: type ?? move.type, reason: reason ?? move.reason };
  });
}
