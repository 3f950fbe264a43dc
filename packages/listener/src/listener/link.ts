import type { RevisionStatus } from "@berth/listener-protocol";
import type {
  Assignment,
  Authorization,
  DeploymentReport,
  LogEntry,
  MetricSample,
  RevisionEventInput,
  RevisionFacts,
} from "@berth/listener-protocol";

/**
 * How a listener talks to the control plane: in process for the embedded
 * listener, over HTTP for `berth listener` on another machine. Always the
 * listener calling; the control plane never calls a listener.
 */
export interface ControlPlaneLink {
  assignments(): Promise<Assignment[]>;
  /**
   * Compare-and-set of a revision's status (false when it was no longer in
   * `from`: superseded, interrupted); `report` is applied to the deployment
   * along with a successful move, and `facts` recorded on the revision.
   */
  transition(
    revisionId: string,
    from: readonly RevisionStatus[],
    to: RevisionStatus,
    message: string,
    report?: DeploymentReport,
    facts?: RevisionFacts,
  ): Promise<boolean>;
  report(deploymentId: string, report: DeploymentReport): Promise<void>;
  /** Adds an event to the revision's timeline without moving its status. */
  recordEvent(revisionId: string, event: RevisionEventInput): Promise<void>;
  /** The tracked branch of a build_on_push deployment has a new head: the control plane makes a revision of it. */
  branchMoved(deploymentId: string, head: string): Promise<void>;
  purge(deploymentId: string): Promise<void>;
  /** Writes the revision's uploaded tarball to `destination`. */
  fetchSource(revisionId: string, destination: string): Promise<void>;
  appendLogs(entries: LogEntry[]): Promise<void>;
  authorize(deploymentId: string, apiKey: string): Promise<Authorization>;
  /** Samples of the deployments' servers' /metrics (metrics-pusher.ts): the control plane keeps them as series. */
  pushMetrics(samples: MetricSample[]): Promise<void>;
  /** The control plane's tracing API (LANGSMITH_ENDPOINT of the deployments), once known. */
  tracingEndpoint(): string | undefined;
}
