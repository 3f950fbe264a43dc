import { existsSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parsedOrError } from "../process.js";
import { DEPLOY_USAGE } from "../usage.js";
import { CONNECTION_OPTIONS, ControlPlaneClient, type Deployment, type LogKind, type Revision } from "./client.js";
import { followRevision } from "./follow.js";
import { fail, failWith, formatLogLine, printJson } from "./output.js";
import { listProject, MAX_BYTES, packTarball, WARN_BYTES } from "./pack.js";
import { uploadTarball } from "./upload.js";

const CONFIG = "langgraph.json";
const FAILURE_LOG_LINES = 30;

/** `berth deploy [dir] [--name NAME]`: pack, upload, create or update the deployment, follow its new revision. */
export async function deployCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({ args: argv, allowPositionals: true, options: { ...CONNECTION_OPTIONS, name: { type: "string" } } }),
  );
  if (parsed instanceof Error) return fail("deploy", `${parsed.message}\n\n${DEPLOY_USAGE}`, 2);
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(DEPLOY_USAGE);
    return 0;
  }
  if (positionals.length > 1) return fail("deploy", `one project folder at most\n\n${DEPLOY_USAGE}`, 2);
  const root = resolve(positionals[0] ?? ".");
  if (!existsSync(root) || !statSync(root).isDirectory()) return fail("deploy", `${root} is not a folder`, 2);
  if (!existsSync(join(root, CONFIG))) return fail("deploy", `${root} has no ${CONFIG}`, 2);
  const name = values.name ?? basename(root);
  const json = values.json === true;
  const say = (text: string) => {
    if (!json) process.stderr.write(text);
  };

  // Everything that can be refused is, before anything leaves the machine.
  const { files, refused } = listProject(root);
  if (refused.length > 0) {
    const list = refused.map((file) => `  ${file.path}: ${file.reason}`).join("\n");
    return fail("deploy", `refusing to upload ${refused.length} file(s); remove them or list them in .gitignore:\n${list}`);
  }
  const tarball = await packTarball(root, files);
  if (tarball === undefined) {
    return fail(
      "deploy",
      `the packed project is over ${MAX_BYTES / (1024 * 1024)} MB, the upload limit; .gitignore what the build does not need`,
    );
  }
  if (tarball.length > WARN_BYTES) {
    process.stderr.write(
      `berth deploy: warning: the packed project is ${(tarball.length / (1024 * 1024)).toFixed(1)} MB; does it hold files the build does not need?\n`,
    );
  }
  say(`packed ${files.length} files (${(tarball.length / 1024).toFixed(1)} KB)\n`);

  const client = new ControlPlaneClient(values);
  let deployment: Deployment;
  try {
    deployment = await createOrFind(client, name, say);
    const { upload_url, object_path } = await client.request<{ upload_url: string; object_path: string }>(
      "POST",
      `/v2/deployments/${deployment.id}/upload-url`,
    );
    await uploadTarball(upload_url, tarball, !json);
    deployment = await client.request<Deployment>("PATCH", `/v2/deployments/${deployment.id}`, {
      source_revision_config: { source_tarball_path: object_path },
    });
  } catch (error) {
    return failWith("deploy", error);
  }
  const revisionId = deployment.latest_revision_id;
  if (!revisionId) return fail("deploy", "the control plane answered no revision for the upload");
  return follow(client, deployment, revisionId, json);
}

async function createOrFind(client: ControlPlaneClient, name: string, say: (text: string) => void): Promise<Deployment> {
  const existing = await client.findByName(name);
  if (existing) {
    if (existing.source !== "internal_source") {
      throw new Error(`deployment "${name}" is a ${existing.source} deployment: choose another --name`);
    }
    say(`updating deployment ${name} (${existing.id})\n`);
    return existing;
  }
  const created = await client.request<Deployment>("POST", "/v2/deployments", {
    name,
    source: "internal_source",
    source_config: {},
    source_revision_config: { graph_config_path: CONFIG },
    secrets: [],
  });
  say(`created deployment ${name} (${created.id})\n`);
  return created;
}

/** Follows the new revision; Ctrl-C stops following only, the build goes on. */
async function follow(client: ControlPlaneClient, deployment: Deployment, revisionId: string, json: boolean): Promise<number> {
  const abort = new AbortController();
  const onInterrupt = () => abort.abort();
  process.once("SIGINT", onInterrupt);
  let revision: Revision;
  try {
    revision = await followRevision(client, deployment.id, revisionId, {
      signal: abort.signal,
      onStatus: (next) => {
        if (!json) process.stderr.write(`revision ${next.id}: ${next.status} (${next.status_message ?? ""})\n`);
      },
      onLog: (line) => {
        if (!json) process.stderr.write(`  ${line.message}\n`);
      },
    });
  } catch (error) {
    if (abort.signal.aborted) {
      process.stderr.write(
        `\nStopped following; revision ${revisionId} goes on. Follow it again with:\n  berth logs ${deployment.name} --build --follow\n`,
      );
      return 130;
    }
    return failWith("deploy", error);
  } finally {
    process.off("SIGINT", onInterrupt);
  }
  try {
    return revision.status === "DEPLOYED"
      ? await deployed(client, deployment, revision, json)
      : await failed(client, deployment, revision, json);
  } catch (error) {
    return failWith("deploy", error);
  }
}

async function deployed(client: ControlPlaneClient, deployment: Deployment, revision: Revision, json: boolean): Promise<number> {
  const current = await client.request<Deployment>("GET", `/v2/deployments/${deployment.id}`);
  const url = current.source_config.custom_url ?? null;
  if (json) printJson(summary(current, revision, { url }));
  else process.stdout.write(`${url ?? "(the deployment has no URL yet)"}\n`);
  return 0;
}

async function failed(client: ControlPlaneClient, deployment: Deployment, revision: Revision, json: boolean): Promise<number> {
  // A server that did not start says why in its own log; anything earlier, in the build log.
  const kind: LogKind = revision.status === "DEPLOY_FAILED" ? "deploy" : "build";
  const lines = (await client.allLogs(deployment.id, revision.id, kind)).slice(-FAILURE_LOG_LINES);
  if (json) {
    printJson(summary(deployment, revision, { logs: lines }));
    return 1;
  }
  process.stderr.write(`berth deploy: revision ${revision.id} ended ${revision.status}: ${revision.status_message ?? ""}\n`);
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
