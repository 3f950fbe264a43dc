import type { DeploymentStatus, RevisionStatus } from "./statuses.js";

/** How a listener fetches a repository (domain/git-integrations.ts stores them encrypted). */
export type GitCredentials =
  /** HTTPS: sent as an `Authorization: Basic` header, by git config in git's environment (never argv, never a URL). */
  | { kind: "token"; token: string; username?: string }
  /** SSH: written to 0600 files in a private temporary directory for the duration of one call. */
  | { kind: "ssh"; privateKey: string; knownHosts: string };

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
  source_revision_config: Record<string, unknown>;
  source_config: Record<string, unknown>;
  secret_references: { name: string; secret_name: string; secret_key: string }[] | null;
  secrets: { name: string; value: string }[];
  artifact_revision_id: string | null;
  /** sha256 of the uploaded tarball, when the revision deploys one. */
  tarball_sha256: string | null;
  /** Where a repo_host revision's source is: the repository, the ref to fetch, and the integration's credentials in clear. */
  repository?: {
    url: string;
    ref: string;
    credentials: GitCredentials | null;
    /** A local integration's repositories are paths on the listener's machine. */
    allow_local: boolean;
  } | null;
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

export interface DeploymentReport {
  status?: DeploymentStatus;
  active_revision_id?: string | null;
  custom_url?: string | null;
  image_version?: string | null;
}
