import type { RevisionRepository, RevisionSpec, SecretReference } from "./revision-spec.js";
import type { DeploymentStatus, RevisionStatus } from "./statuses.js";

/*
 * What a listener and the control plane exchange (in process for the
 * embedded listener, over HTTP for `berth listener`): desired state out,
 * status, reports and logs in.
 */

/** A revision as a listener needs it to build and run it: its secrets in clear. */
export interface AssignedRevision {
  id: string;
  number: number;
  status: RevisionStatus;
  status_message: string;
  source: string;
  /** What to build and run: the only part of the revision's configuration a listener reads. */
  spec: RevisionSpec;
  /** The stored configuration spec is made of: sent for listeners of the previous release only (docs/control-plane.md). */
  source_revision_config: Record<string, unknown>;
  /** As source_revision_config: for listeners of the previous release only. */
  source_config: Record<string, unknown>;
  /** spec.secret_references: for listeners of the previous release only. */
  secret_references: SecretReference[] | null;
  secrets: { name: string; value: string }[];
  artifact_revision_id: string | null;
  /** sha256 of the uploaded tarball, when the revision deploys one. */
  tarball_sha256: string | null;
  /** spec.repository: for listeners of the previous release only. */
  repository?: RevisionRepository | null;
  /** How to pull an internal_image revision's image from the platform's registry (a pull token scoped to the deployment). */
  registry_auth?: { username: string; password: string; serveraddress: string } | null;
}

/** One deployment a listener runs: what should run (latest), what runs (active), whether to tear it down. */
export interface Assignment {
  id: string;
  tenant_id: string;
  name: string;
  source: string;
  status: string;
  deleted: boolean;
  active_revision_id: string | null;
  latest: AssignedRevision | null;
  active: AssignedRevision | null;
  /** Revisions still in progress other than the latest (they end SKIPPED; a listener stops working on them). */
  in_progress_revision_ids: string[];
  /** Where the deployment sends its traces: its tracing project, with a key valid for the tracing API only. */
  tracing: { project: string; api_key: string };
  /** The key its graphs ask the Auth Service for their users' tokens with (valid for that only). */
  auth_service: { api_key: string };
  /** The secret its agent servers sign run webhooks with (BERTH_WEBHOOK_SECRET); absent from an older control plane. */
  run_webhooks?: { secret: string };
}

export type Authorization = "allowed" | "denied" | "unknown_key";

export type LogKind = "build" | "deploy";

export interface LogEntry {
  deployment_id: string;
  revision_id: string | null;
  kind: LogKind;
  timestamp: string;
  level: string;
  message: string;
}

/** What a listener learnt about a revision while moving it (recorded with the move). */
export interface RevisionFacts {
  /** The content id of the image the revision runs (`sha256:…`, as the engine reports it). */
  image_digest?: string;
  /** The commit a repo_host revision was fetched at (source_revision_config.repo_commit_sha). */
  repo_commit_sha?: string;
}

/** Something that happened to a revision, for its timeline (Kubernetes Event style). */
export interface RevisionEventInput {
  type: "Normal" | "Warning";
  /** CamelCase, machine-readable: e.g. ServerRestarted, ServerExited, HealthCheckFailed. */
  reason: string;
  message: string;
}

/** What a listener sees actually running for a deployment (sent with a report). */
export interface ObservedDeployment {
  /** The revision the router sends traffic to now (null: nothing serves). */
  serving_revision_id: string | null;
  /** Whether the serving revision's servers pass their health checks. */
  healthy: boolean;
  reason: string;
  message: string;
  /**
   * Whether the listener stopped the revision's servers for lack of requests
   * (scale-to-zero): the next request, or a cron about to be due, starts them
   * again. Absent: the listener does not put this deployment to sleep.
   */
  sleeping?: boolean;
}

export interface DeploymentReport {
  status?: DeploymentStatus;
  active_revision_id?: string | null;
  custom_url?: string | null;
  image_version?: string | null;
  /** What runs, as the listener sees it: the control plane recomputes the conditions from it. */
  observed?: ObservedDeployment;
}

export const CONDITION_STATUSES = ["True", "False", "Unknown"] as const;
export type ConditionStatus = (typeof CONDITION_STATUSES)[number];

/**
 * One aspect of a revision's or deployment's state (Kubernetes condition
 * style), beside the spec's status enum: whether it holds, why (`reason`,
 * CamelCase), since when, and as of which revision number.
 */
export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  /** When `status` last changed (not when the condition was last written). */
  last_transition_time: string;
  /** The revision number this condition was computed for. */
  observed_generation: number;
}

/** A run's final statuses, as an agent server counts the runs it ended. */
export const METRIC_RUN_STATUSES = ["success", "error", "timeout", "interrupted"] as const;

/**
 * One agent server's numbers over one interval of a listener's metrics loop:
 * its counters as deltas since the previous sample (after a restart of the
 * server, the new values whole), its gauges as read at `timestamp`.
 */
export interface MetricSample {
  deployment_id: string;
  /** Names the server within the deployment (replica-1, worker-2): one series each for CPU and memory. */
  replica: string;
  /** When it was read (ISO 8601). */
  timestamp: string;
  /** Wall seconds the deltas cover. */
  interval_seconds: number;
  /** CPU seconds the server used in the interval. */
  cpu_seconds: number;
  /** Its resident memory. */
  memory_bytes: number;
  /** Runs pending and running on the deployment's database (every server counts them all). */
  pending_runs: number;
  running_runs: number;
  /** The runs the server ended in the interval; null for a server that executes none. */
  runs: {
    finished: Record<(typeof METRIC_RUN_STATUSES)[number], number>;
    /** Their durations: upper bounds (ms) and, per bound, how many took at most that long; `count` is every run. */
    duration_ms: { le: number[]; counts: number[]; count: number; sum: number };
  } | null;
}
