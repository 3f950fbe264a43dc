import type { ControlPlaneClient, Deployment, LogKind, LogLine, Revision } from "./client.js";
import { FINAL_REVISION_STATUSES } from "@berth/listener-protocol";
import { terminalText } from "@berth/service-kit";
import { failWith, formatLogLine, printJson, revisionStatusLine } from "./output.js";

export interface FollowHandlers {
  onStatus(revision: Revision): void;
  onLog(line: LogLine): void;
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
  let printed = 0;
  const drainLogs = async () => {
    for (;;) {
      const lines = await client.logs(deploymentId, revisionId, "build", printed, signal);
      for (const line of lines) onLog(line);
      printed += lines.length;
      if (lines.length < 1000) return;
    }
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
    await drainLogs();
    if (next.status !== revision.status) onStatus(next);
    revision = next;
  }
  await drainLogs();
  return revision;
}

const FAILURE_LOG_LINES = 30;

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
        if (!json) process.stderr.write(revisionStatusLine(next));
      },
      onLog: (line) => {
        if (!json) process.stderr.write(`  ${terminalText(line.message)}\n`);
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
  if (lines.length > 0) {
    process.stderr.write(`last ${lines.length} ${kind} log lines:\n${lines.map(formatLogLine).join("")}`);
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
