import { setTimeout as delay } from "node:timers/promises";
import { parseArgs } from "node:util";
import { parsedOrError } from "../process.js";
import { LOGS_USAGE } from "../usage.js";
import { CONNECTION_OPTIONS, connect, type ControlPlaneClient, type Deployment, type LogLine } from "./client.js";
import { followRevision } from "./follow.js";
import { revisionIdOf } from "./ids.js";
import { terminalJson } from "@berth/service-kit";
import { fail, failWith, formatLogLine, printJson, revisionStatusLine } from "./output.js";

/** Server logs have no event to wait for: a followed log is read again this often. */
const SERVER_LOG_POLL_MS = 2000;

/** `berth logs <deployment> [--revision R] [--build] [--follow]`. */
export async function logsCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        ...CONNECTION_OPTIONS,
        revision: { type: "string" },
        build: { type: "boolean" },
        follow: { type: "boolean", short: "f" },
      },
    }),
  );
  if (parsed instanceof Error) return fail("logs", `${parsed.message}\n\n${LOGS_USAGE}`, 2);
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(LOGS_USAGE);
    return 0;
  }
  if (positionals.length !== 1) return fail("logs", `expected one deployment (id or name)\n\n${LOGS_USAGE}`, 2);
  const client = connect(values);
  const json = values.json === true;
  // With --follow and --json, one JSON object a line (the lines arrive over time).
  const print = (line: LogLine) => process.stdout.write(json ? `${terminalJson(line)}\n` : formatLogLine(line));
  const abort = new AbortController();
  const onInterrupt = () => abort.abort();
  process.once("SIGINT", onInterrupt);
  try {
    const deployment = await client.deployment(positionals[0] as string);
    const revisionId = values.revision === undefined ? undefined : await revisionIdOf(client, deployment, values.revision);
    if (values.build) return await buildLogs(client, deployment, revisionId, values.follow === true, json, print, abort.signal);
    if (!values.follow) {
      const lines = await client.allLogs(deployment.id, revisionId, "deploy");
      if (json) printJson(lines);
      else for (const line of lines) print(line);
      return 0;
    }
    let printed = 0;
    for (;;) {
      const lines = await client.logs(deployment.id, revisionId, "deploy", printed, abort.signal);
      for (const line of lines) print(line);
      printed += lines.length;
      if (lines.length < 1000) await delay(SERVER_LOG_POLL_MS, undefined, { signal: abort.signal });
    }
  } catch (error) {
    if (abort.signal.aborted) return 0;
    return failWith("logs", error);
  } finally {
    process.off("SIGINT", onInterrupt);
  }
}

async function buildLogs(
  client: ControlPlaneClient,
  deployment: Deployment,
  revisionRef: string | undefined,
  follow: boolean,
  json: boolean,
  print: (line: LogLine) => void,
  signal: AbortSignal,
): Promise<number> {
  const revisionId = revisionRef ?? deployment.latest_revision_id;
  if (!revisionId) return fail("logs", `${deployment.name} has no revision`);
  if (!follow) {
    const lines = await client.allLogs(deployment.id, revisionId, "build");
    if (json) printJson(lines);
    else for (const line of lines) print(line);
    return 0;
  }
  const revision = await followRevision(client, deployment.id, revisionId, {
    signal,
    onLog: print,
    onStatus: (next) => {
      if (!json) process.stderr.write(revisionStatusLine(next));
    },
  });
  return revision.status === "DEPLOYED" ? 0 : 1;
}
