import type { V1ContainerStatus, V1Deployment, V1Pod } from "@kubernetes/client-node";
import type { ClusterConnection } from "./cluster-connection.js";
import { apiErrorMessage, apiStatusCode, deploymentSelector } from "./delete-objects.js";

export interface RolloutStatus {
  state: "progressing" | "ready" | "failed";
  /** A sentence for the deploy log, naming the object, pod and container concerned. */
  reason: string;
}

export interface WaitForRolloutOptions {
  timeoutMs: number;
  pollMs: number;
  signal?: AbortSignal;
}

/** Components that run as Deployments; db and cache are StatefulSets, not rolled per revision. */
const ROLLED_COMPONENTS = new Set(["api", "queue"]);
/** Waiting reasons that do not go away without a new revision. */
const STUCK_REASONS: Record<string, string> = {
  ImagePullBackOff: "cannot pull its image",
  ErrImagePull: "cannot pull its image",
  InvalidImageName: "has an invalid image name",
  CreateContainerConfigError: "cannot be configured",
};

/**
 * Where a revision's rollout is: ready once the api and queue Deployments run
 * only this revision's pods, all available; failed as soon as a pod of the
 * revision is stuck in a way that waiting will not fix, or a Deployment has
 * passed its progress deadline.
 */
export async function readRollout(
  connection: ClusterConnection,
  namespace: string,
  deploymentId: string,
  revisionId: string,
): Promise<RolloutStatus> {
  const [deployments, pods] = await Promise.all([
    connection.apps.listNamespacedDeployment({
      namespace,
      labelSelector: `${deploymentSelector(deploymentId)},berth.dev/component in (api,queue)`,
    }),
    // Pod templates carry the deployment and revision labels but not necessarily managed-by.
    connection.core.listNamespacedPod({ namespace, labelSelector: `berth.dev/deployment=${deploymentId}` }),
  ]);
  // The database and cache pods carry no revision (a revision does not restart them), yet the revision cannot run without them.
  const podsToCheck = pods.items.filter((pod) => {
    const podLabels = pod.metadata?.labels ?? {};
    return podLabels["berth.dev/revision"] === revisionId || !ROLLED_COMPONENTS.has(podLabels["berth.dev/component"] ?? "");
  });
  for (const pod of podsToCheck) {
    if (pod.metadata?.deletionTimestamp) continue;
    const failure = podFailure(pod);
    if (failure) return { state: "failed", reason: failure };
  }
  for (const deployment of deployments.items) {
    const stalled = deployment.status?.conditions?.find((c) => c.type === "Progressing" && c.status === "False");
    if (stalled?.reason === "ProgressDeadlineExceeded") {
      return {
        state: "failed",
        reason: `Deployment ${deployment.metadata?.name} made no progress within its deadline: ${stalled.message ?? stalled.reason}`,
      };
    }
  }
  if (deployments.items.length === 0) {
    return { state: "progressing", reason: `Waiting for the api Deployment of deployment ${deploymentId} to be created.` };
  }
  for (const deployment of deployments.items) {
    const waiting = deploymentProgress(deployment, revisionId);
    if (waiting) return { state: "progressing", reason: waiting };
  }
  const oldPods = pods.items.filter(
    (pod) =>
      ROLLED_COMPONENTS.has(pod.metadata?.labels?.["berth.dev/component"] ?? "") &&
      pod.metadata?.labels?.["berth.dev/revision"] !== revisionId,
  );
  if (oldPods.length > 0) {
    const names = oldPods.map((pod) => pod.metadata?.name).join(", ");
    return { state: "progressing", reason: `Waiting for ${oldPods.length} pod(s) of earlier revisions to stop: ${names}.` };
  }
  const names = deployments.items.map((d) => d.metadata?.name).join(" and ");
  return { state: "ready", reason: `Revision ${revisionId} is available: ${names} run only its pods.` };
}

/** Why a Deployment is not yet done with the revision, or null when it is. */
function deploymentProgress(deployment: V1Deployment, revisionId: string): string | null {
  const name = deployment.metadata?.name;
  const labels = deployment.metadata?.labels ?? {};
  if (labels["berth.dev/revision"] !== revisionId) {
    return `Deployment ${name} still describes revision ${labels["berth.dev/revision"] ?? "unknown"}.`;
  }
  const status = deployment.status ?? {};
  if ((status.observedGeneration ?? 0) < (deployment.metadata?.generation ?? 0)) {
    return `Waiting for Kubernetes to start rolling out Deployment ${name}.`;
  }
  const wanted = deployment.spec?.replicas ?? 1;
  // The API server leaves out counts that are zero.
  const updated = status.updatedReplicas ?? 0;
  const available = status.availableReplicas ?? 0;
  const total = status.replicas ?? 0;
  if (updated < wanted) return `Deployment ${name}: ${updated} of ${wanted} pod(s) run the new revision.`;
  if (total > updated) return `Deployment ${name}: ${total - updated} pod(s) of the previous revision still running.`;
  if (available < wanted) return `Deployment ${name}: ${available} of ${wanted} new pod(s) available.`;
  return null;
}

/** A sentence saying why the pod cannot run, or null while it may still come up. */
function podFailure(pod: V1Pod): string | null {
  const podName = pod.metadata?.name;
  const unscheduled = pod.status?.conditions?.find((c) => c.type === "PodScheduled" && c.status === "False");
  if (unscheduled?.reason === "Unschedulable") {
    return `Pod ${podName} cannot be scheduled on any node: ${unscheduled.message ?? "no reason given"}`;
  }
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const status of statuses) {
    const failure = containerFailure(status);
    if (failure) return `Container "${status.name}" of pod ${podName} ${failure}`;
  }
  return null;
}

function containerFailure(status: V1ContainerStatus): string | null {
  const waiting = status.state?.waiting;
  if (!waiting?.reason) return null;
  const detail = waiting.message ? `: ${waiting.message}` : ".";
  if (STUCK_REASONS[waiting.reason]) return `${STUCK_REASONS[waiting.reason]} (${waiting.reason})${detail}`;
  if (waiting.reason !== "CrashLoopBackOff") return null;
  const last = status.lastState?.terminated;
  const exit = last
    ? `; it last exited with code ${last.exitCode}${last.reason ? ` (${last.reason})` : ""}${last.message ? `: ${last.message.trim()}` : ""}`
    : "";
  return `keeps crashing (CrashLoopBackOff, restarted ${status.restartCount} times)${exit}`;
}

/**
 * Polls readRollout until the revision is ready or failed; after timeoutMs it is
 * failed, with what it was still waiting for. Errors reaching the API are
 * retried until then, except refusals (401, 403) that waiting will not fix.
 * Throws the signal's reason when aborted.
 */
export async function waitForRollout(
  connection: ClusterConnection,
  namespace: string,
  deploymentId: string,
  revisionId: string,
  options: WaitForRolloutOptions,
): Promise<RolloutStatus> {
  const deadline = Date.now() + options.timeoutMs;
  let last = "nothing was read from the cluster";
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      const status = await readRollout(connection, namespace, deploymentId, revisionId);
      if (status.state !== "progressing") return status;
      last = status.reason;
    } catch (error) {
      const code = apiStatusCode(error);
      if (code === 401 || code === 403) throw error;
      last = `the cluster did not answer: ${apiErrorMessage(error)}`;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      return { state: "failed", reason: `The rollout did not finish within ${duration(options.timeoutMs)}; last: ${last}` };
    }
    await sleep(Math.min(options.pollMs, left), options.signal);
  }
}

function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
