/*
 * Status conditions (Kubernetes style) beside the spec's status enums: each
 * revision's and deployment's state as a few conditions that hold or not,
 * each with a CamelCase reason, derived from the records (a revision's
 * status, the deployment's active revision) and the listener's last
 * observation. Derivation is pure; the services record the result, whose
 * transition times the next derivation keeps while a condition's status holds.
 */
import {
  type Condition,
  type DeploymentReport,
  type DeploymentStatus,
  FINAL_REVISION_STATUSES,
  type ObservedDeployment,
  type RevisionEventInput,
  type RevisionStatus,
} from "@berth/listener-protocol";

/**
 * The conditions, each of a revision; a deployment has Serving and Healthy:
 * - Built: its source was built (or its image pulled) and it can be deployed;
 * - Serving: it is the revision the deployment's traffic goes to (a
 *   deployment's: some revision takes its traffic);
 * - Healthy: while it serves, its servers pass their health checks;
 * - Replaced: it served, and a later revision serves instead;
 * - Sleeping: its servers are stopped for lack of requests and start again on
 *   the next one (only where the listener puts the deployment to sleep).
 */
export const CONDITION_TYPES = ["Built", "Serving", "Healthy", "Replaced", "Sleeping"] as const;

/** A condition before it is dated and numbered. */
type Derived = Pick<Condition, "type" | "status" | "reason" | "message">;

/** Statuses a revision only reaches once built (a redeploy reuses a build, an image counts as built once pulled). */
const BUILT_STATUSES: readonly RevisionStatus[] = ["AWAITING_DEPLOY", "DEPLOYING", "DEPLOYED", "DEPLOY_FAILED"];

/** A status as a CamelCase reason: BUILD_FAILED → BuildFailed. */
function reasonOf(status: RevisionStatus): string {
  return status
    .toLowerCase()
    .split("_")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("");
}

/** The type and reason of a move in a revision's timeline: a failure is a Warning. */
export function moveEventOf(status: RevisionStatus): Pick<RevisionEventInput, "type" | "reason"> {
  return { type: status.endsWith("_FAILED") ? "Warning" : "Normal", reason: reasonOf(status) };
}

/** What a revision's conditions are derived from. */
export interface RevisionState {
  id: string;
  number: number;
  status: RevisionStatus;
  status_message: string;
}

/** Where a deployment's traffic goes, as the records and the listener tell it. */
export interface ServingState {
  active_revision_id: string | null;
  /** The active revision's number, for messages. */
  active_number: number | null;
  /** The listener's last observation; null: none since the active revision was deployed. */
  observed: ObservedDeployment | null;
}

/** A revision deployed passed its servers' health check, so it is healthy until the listener says otherwise. */
const HEALTHY_AT_DEPLOY: Derived = {
  type: "Healthy",
  status: "True",
  reason: "HealthCheckPassed",
  message: "Its servers passed their health check when it was deployed",
};

const NOT_SERVING_HEALTH: Derived = { type: "Healthy", status: "Unknown", reason: "NotServing", message: "It does not serve" };

/**
 * Serving and Healthy of the active revision, which the listener may observe
 * not serving or unhealthy, and Sleeping where the listener puts it to sleep:
 * asleep, its health is Unknown (not False), so the deployment stays READY.
 */
function activeConditions(serving: ServingState, servesMessage: string): [Derived, Derived, ...Derived[]] {
  const { observed } = serving;
  if (observed && observed.serving_revision_id !== serving.active_revision_id)
    return [{ type: "Serving", status: "False", reason: observed.reason, message: observed.message }, NOT_SERVING_HEALTH];
  const sleeping: Derived[] =
    observed?.sleeping === undefined
      ? []
      : observed.sleeping
        ? [{ type: "Sleeping", status: "True", reason: "Idle", message: observed.message }]
        : [{ type: "Sleeping", status: "False", reason: "Awake", message: "Its servers run" }];
  const health: Derived = !observed
    ? HEALTHY_AT_DEPLOY
    : observed.sleeping
      ? { type: "Healthy", status: "Unknown", reason: "Sleeping", message: observed.message }
      : { type: "Healthy", status: observed.healthy ? "True" : "False", reason: observed.reason, message: observed.message };
  return [{ type: "Serving", status: "True", reason: "Serving", message: servesMessage }, health, ...sleeping];
}

function revisionLabel(number: number | null, id: string): string {
  return number === null ? `revision ${id}` : `revision ${number} (${id})`;
}

function deriveRevision(revision: RevisionState, serving: ServingState, wasBuilt: boolean): Derived[] {
  const { status, status_message: statusMessage } = revision;
  const final = FINAL_REVISION_STATUSES.includes(status);
  const built: Derived =
    wasBuilt || BUILT_STATUSES.includes(status)
      ? { type: "Built", status: "True", reason: "Built", message: "Built (or its image pulled): it can be deployed" }
      : { type: "Built", status: final ? "False" : "Unknown", reason: reasonOf(status), message: statusMessage };
  const notReplaced: Derived = {
    type: "Replaced",
    status: "False",
    reason: "NotReplaced",
    message: "No later revision replaced it",
  };
  if (serving.active_revision_id === revision.id) {
    const [serves, health, ...sleeping] = activeConditions(serving, "The deployment's traffic goes to it");
    return [built, serves, health, notReplaced, ...sleeping];
  }
  if (status === "DEPLOYED" && serving.active_revision_id) {
    const message = `Replaced by ${revisionLabel(serving.active_number, serving.active_revision_id)}: no longer serving`;
    return [
      built,
      { type: "Serving", status: "False", reason: "Replaced", message },
      NOT_SERVING_HEALTH,
      { type: "Replaced", status: "True", reason: "Replaced", message },
    ];
  }
  const notServing: Derived =
    status === "DEPLOYED"
      ? { type: "Serving", status: "False", reason: "Stopped", message: "Nothing serves the deployment" }
      : {
          type: "Serving",
          status: "False",
          reason: reasonOf(status),
          message: final ? statusMessage : "Not deployed yet",
        };
  return [built, notServing, NOT_SERVING_HEALTH, notReplaced];
}

/**
 * `derived` dated and numbered: a condition whose status did not change keeps
 * its recorded transition time (and its message, when the reason is the same).
 */
function settle(derived: Derived[], recorded: readonly Condition[], generation: number, now: string): Condition[] {
  return derived.map((condition) => {
    const before = recorded.find((candidate) => candidate.type === condition.type);
    if (before && before.status === condition.status) {
      const message = before.reason === condition.reason ? before.message : condition.message;
      return { ...condition, message, last_transition_time: before.last_transition_time, observed_generation: generation };
    }
    return { ...condition, last_transition_time: now, observed_generation: generation };
  });
}

/** A revision's conditions; `now` dates those whose status changed since `recorded`. */
export function revisionConditions(
  revision: RevisionState,
  serving: ServingState,
  recorded: readonly Condition[],
  now: string,
): Condition[] {
  const wasBuilt = recorded.some((condition) => condition.type === "Built" && condition.status === "True");
  return settle(deriveRevision(revision, serving, wasBuilt), recorded, revision.number, now);
}

/** What a deployment's conditions are derived from, beside ServingState. */
export interface LatestRevisionState {
  number: number;
  status: RevisionStatus;
}

/** A deployment's conditions, numbered with its latest revision's number. */
export function deploymentConditions(
  latest: LatestRevisionState,
  serving: ServingState,
  recorded: readonly Condition[],
  now: string,
): Condition[] {
  let derived: Derived[];
  if (serving.active_revision_id) {
    const label = revisionLabel(serving.active_number, serving.active_revision_id);
    derived = activeConditions(serving, `Its traffic goes to ${label}`);
  } else if (FINAL_REVISION_STATUSES.includes(latest.status) || hasReason(recorded, "Serving", "NoRevisionServing")) {
    // Once a revision ended without serving, a new one in progress leaves the deployment unused until it serves.
    const message = `No revision serves: the latest, revision ${latest.number}, is ${latest.status}`;
    derived = [{ type: "Serving", status: "False", reason: "NoRevisionServing", message }, NOT_SERVING_HEALTH];
  } else {
    const message = `No revision serves yet: revision ${latest.number} is ${latest.status}`;
    derived = [{ type: "Serving", status: "False", reason: "AwaitingFirstRevision", message }, NOT_SERVING_HEALTH];
  }
  return settle(derived, recorded, latest.number, now);
}

/** Whether `conditions` has one of `type` with `reason`. */
function hasReason(conditions: readonly Condition[], type: string, reason: string): boolean {
  return conditions.some((condition) => condition.type === type && condition.reason === reason);
}

/**
 * The spec's deployment status, from the deployment's conditions: READY while
 * a revision serves healthily, UNKNOWN while it does not (or the listener sees
 * it not serving), AWAITING_DATABASE until a first revision serves, UNUSED
 * when none does. (AWAITING_DELETE comes with deletion, not from here.)
 */
export function deploymentStatusOf(conditions: readonly Condition[]): DeploymentStatus {
  const serving = conditions.find((condition) => condition.type === "Serving");
  const healthy = conditions.find((condition) => condition.type === "Healthy");
  if (serving?.status === "True") return healthy?.status === "False" ? "UNKNOWN" : "READY";
  if (serving?.reason === "AwaitingFirstRevision") return "AWAITING_DATABASE";
  if (serving?.reason === "NoRevisionServing") return "UNUSED";
  return "UNKNOWN";
}

/**
 * What a report tells of what runs. A listener sends `observed`; one that
 * does not yet says it with `status` and `active_revision_id`: a revision
 * newly active passed its health check, READY is healthy, UNKNOWN is not.
 * Undefined: the report changes nothing of what is known.
 */
export function observationOf(report: DeploymentReport, activeRevisionId: string | null): ObservedDeployment | null | undefined {
  if (report.observed) return report.observed;
  if (report.active_revision_id && report.active_revision_id !== activeRevisionId) return null;
  const serving = report.active_revision_id ?? activeRevisionId;
  if (report.status === "UNKNOWN")
    return { serving_revision_id: serving, healthy: false, reason: "Unhealthy", message: "Its servers stopped answering" };
  if (report.status === "READY")
    return { serving_revision_id: serving, healthy: true, reason: "Healthy", message: "Its servers answer" };
  return undefined;
}
