import type { ControlPlaneClient, Deployment, LogKind, LogLine, Revision } from "./client.js";
import { FINAL_REVISION_STATUSES } from "@berth/listener-protocol";
import { terminalText } from "@berth/service-kit";
import { failWith, formatLogLine, printJson, revisionStatusLine } from "./output.js";

export interface FollowHandlers {
  onStatus(revision: Revision): void;
  /** `revision`: the revision as last read, final once the last lines are read (a line may repeat its reason). */
  onLog(line: LogLine, revision: Revision): void;
  signal?: AbortSignal;
}

/** How long one long poll waits for a status change before the build log is read again. */
const POLL_SECONDS = 2;

/**
 * Follows a revision until it is final: each status change and each new build
 * log line, in order. The long poll (`while_status`) is the wait: it answers
 * as soon as the status leaves the one last seen, else after POLL_SECONDS.
 */
export async function followRevision(
  client: ControlPlaneClient,
  deploymentId: string,
  revisionId: string,
  { onStatus, onLog, signal }: FollowHandlers,
): Promise<Revision> {
  const path = `/v2/deployments/${deploymentId}/revisions/${revisionId}`;
  let read = 0;
  // The build logs its reason to fail as an error line, then moves the revision: trailing error lines wait
  // for a later line or the final status, so that a reason is not printed before its revision says it failed.
  let held: LogLine[] = [];
  const release = (current: Revision) => {
    for (const line of held) onLog(line, current);
    held = [];
  };
  const drainLogs = async (current: Revision) => {
    for (;;) {
      const lines = await client.logs(deploymentId, revisionId, "build", read, signal);
      for (const line of lines) {
        if (line.level !== "error") {
          release(current);
          onLog(line, current);
        } else held.push(line);
      }
      read += lines.length;
      if (lines.length < 1000) break;
    }
    if (FINAL_REVISION_STATUSES.includes(current.status)) release(current);
  };
  let revision = await client.request<Revision>("GET", path, undefined, signal);
  onStatus(revision);
  while (!FINAL_REVISION_STATUSES.includes(revision.status)) {
    const next = await client.request<Revision>(
      "GET",
      `${path}?wait_seconds=${POLL_SECONDS}&while_status=${revision.status}`,
      undefined,
      signal,
    );
    await drainLogs(next);
    if (next.status !== revision.status) onStatus(next);
    revision = next;
  }
  await drainLogs(revision);
  return revision;
}

const FAILURE_LOG_LINES = 30;

const FAILED_STATUSES = new Set(["CREATE_FAILED", "BUILD_FAILED", "DEPLOY_FAILED"]);

/** A log line the failed revision's reason already quotes (`berth serve: ` aside): printed once, in the reason. */
function quotedByReason(line: LogLine, revision: Revision): boolean {
  const reason = revision.status_message;
  if (!reason || !FAILED_STATUSES.has(revision.status)) return false;
  const text = line.message.replace(/^berth (?:serve|dev|check): /, "").trim();
  return text !== "" && reason.includes(text);
}

/**
 * Follows a new revision to its end, as `berth deploy` and `berth revisions
 * redeploy` do: progress on stderr, the URL on stdout and exit 0 once
 * DEPLOYED; otherwise the reason and the last log lines, exit 1. Ctrl-C stops
 * following only (exit 130): the revision goes on.
 */
export async function followToOutcome(
  command: string,
  client: ControlPlaneClient,
  deployment: Deployment,
  revisionId: string,
  json: boolean,
): Promise<number> {
  const abort = new AbortController();
  const onInterrupt = () => abort.abort();
  process.once("SIGINT", onInterrupt);
  let revision: Revision;
  try {
    revision = await followRevision(client, deployment.id, revisionId, {
      signal: abort.signal,
      onStatus: (next) => {
        // A failure is told once, by the last line (failed()), with its reason.
        if (!json && !FAILED_STATUSES.has(next.status)) process.stderr.write(revisionStatusLine(next));
      },
      onLog: (line, current) => {
        if (!json && !quotedByReason(line, current)) process.stderr.write(`  ${terminalText(line.message)}\n`);
      },
    });
  } catch (error) {
    if (abort.signal.aborted) {
      process.stderr.write(
        `\nStopped following; revision ${revisionId} goes on. Follow it again with:\n  berth logs ${deployment.name} --build --follow\n`,
      );
      return 130;
    }
    return failWith(command, error);
  } finally {
    process.off("SIGINT", onInterrupt);
  }
  try {
    return revision.status === "DEPLOYED"
      ? await deployed(client, deployment, revision, json)
      : await failed(command, client, deployment, revision, json);
  } catch (error) {
    return failWith(command, error);
  }
}

async function deployed(client: ControlPlaneClient, deployment: Deployment, revision: Revision, json: boolean): Promise<number> {
  const current = await client.request<Deployment>("GET", `/v2/deployments/${deployment.id}`);
  const url = current.source_config.custom_url ?? null;
  if (json) printJson(summary(current, revision, { url }));
  else process.stdout.write(`${url ? terminalText(url) : "(the deployment has no URL yet)"}\n`);
  return 0;
}

async function failed(
  command: string,
  client: ControlPlaneClient,
  deployment: Deployment,
  revision: Revision,
  json: boolean,
): Promise<number> {
  // A server that did not start says why in its own log; anything earlier, in the build log.
  const kind: LogKind = revision.status === "DEPLOY_FAILED" ? "deploy" : "build";
  const lines = (await client.allLogs(deployment.id, revision.id, kind)).slice(-FAILURE_LOG_LINES);
  if (json) {
    printJson(summary(deployment, revision, { logs: lines }));
    return 1;
  }
  process.stderr.write(
    `${terminalText(`berth ${command}: revision ${revision.id} ended ${revision.status}: ${revision.status_message ?? ""}`)}\n`,
  );
  // The build log was printed as it came; the deploy log was not: its last lines, but those the reason quotes.
  const unseen = kind === "build" ? [] : lines.filter((line) => !quotedByReason(line, revision));
  if (unseen.length > 0) {
    process.stderr.write(`last ${unseen.length} ${kind} log lines:\n${unseen.map(formatLogLine).join("")}`);
  }
  return 1;
}

function summary(deployment: Deployment, revision: Revision, extra: Record<string, unknown>) {
  return {
    deployment_id: deployment.id,
    name: deployment.name,
    revision_id: revision.id,
    status: revision.status,
    status_message: revision.status_message,
    ...extra,
  };
}
