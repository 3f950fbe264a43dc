import { parseArgs } from "node:util";
import { parsedOrError } from "../process.js";
import { REVISIONS_USAGE } from "../usage.js";
import { CONNECTION_OPTIONS, type ControlPlaneClient, connect, type Deployment, type Page, type Revision } from "./client.js";
import { followToOutcome } from "./follow.js";
import { revisionIdOf } from "./ids.js";
import { fail, failWith, printJson, revisionStatusLine, table } from "./output.js";

const ACTIONS = ["list", "get", "redeploy", "interrupt"] as const;
type Action = (typeof ACTIONS)[number];

interface Options {
  json: boolean;
  limit: string;
  follow: boolean;
  all: boolean;
}

/** `berth revisions list|get|redeploy|interrupt <deployment> [revision]`. */
export async function revisionsCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        ...CONNECTION_OPTIONS,
        limit: { type: "string" },
        "no-follow": { type: "boolean" },
        all: { type: "boolean" },
      },
    }),
  );
  if (parsed instanceof Error) return fail("revisions", `${parsed.message}\n\n${REVISIONS_USAGE}`, 2);
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(REVISIONS_USAGE);
    return 0;
  }
  const [action, ref, revisionRef, ...extra] = positionals;
  const known = (ACTIONS as readonly string[]).includes(action ?? "");
  if (!known || ref === undefined || extra.length > 0 || (action === "list" && revisionRef !== undefined)) {
    return fail("revisions", `expected ${ACTIONS.join(", ")} with a deployment\n\n${REVISIONS_USAGE}`, 2);
  }
  const client = connect(values);
  const options = {
    json: values.json === true,
    limit: values.limit ?? "20",
    follow: values["no-follow"] !== true,
    all: values.all === true,
  };
  try {
    const deployment = await client.deployment(ref);
    if (action === "list") return await list(client, deployment, options);
    const revisionId =
      revisionRef === undefined ? deployment.latest_revision_id : await revisionIdOf(client, deployment, revisionRef);
    if (!revisionId) return fail("revisions", `${deployment.name} has no revision`);
    return await single(action as Exclude<Action, "list">, client, deployment, revisionId, options);
  } catch (error) {
    return failWith("revisions", error);
  }
}

/**
 * A revision that never had source: made waiting for it (a new deployment's
 * first revision, before its upload) and skipped when the revision that
 * brought it came. Nothing was built or served from it.
 */
function neverHadSource(revision: Revision): boolean {
  const config = revision.source_revision_config ?? {};
  const missing = revision.source === "internal_image" ? config.image_uri : config.source_tarball_path;
  const waits = revision.source === "internal_source" || revision.source === "internal_image";
  return waits && revision.status === "SKIPPED" && (missing === null || missing === undefined);
}

async function list(client: ControlPlaneClient, deployment: Deployment, { json, limit, all }: Options): Promise<number> {
  const path = `/v2/deployments/${deployment.id}/revisions?limit=${encodeURIComponent(limit)}`;
  const page = await client.request<Page<Revision>>("GET", path);
  if (json) {
    printJson(page);
    return 0;
  }
  const shown = all ? page.resources : page.resources.filter((revision) => !neverHadSource(revision));
  const hidden = page.resources.length - shown.length;
  if (page.resources.length === 0) process.stdout.write(`${deployment.name} has no revision\n`);
  else if (shown.length > 0)
    process.stdout.write(
      table(
        ["ID", "STATUS", "CREATED", "MESSAGE"],
        shown.map((r) => [r.id, statusWithRole(r), r.created_at, r.status_message ?? ""]),
      ),
    );
  if (hidden > 0)
    process.stderr.write(`${hidden} revision(s) that never had source (waited for an upload) not shown: --all shows them\n`);
  return 0;
}

async function single(
  action: Exclude<Action, "list">,
  client: ControlPlaneClient,
  deployment: Deployment,
  revisionId: string,
  { json, follow }: Options,
): Promise<number> {
  const path = `/v2/deployments/${deployment.id}/revisions/${revisionId}`;
  if (action === "get") {
    const revision = await client.request<Revision>("GET", path);
    if (json) printJson(revision);
    else process.stdout.write(details(deployment, revision));
    return 0;
  }
  if (action === "interrupt") {
    // 409 when the revision is final already: the control plane's detail says in which status.
    const revision = await client.request<Revision>("POST", `${path}/interrupt`);
    if (json) printJson(revision);
    else process.stdout.write(revisionStatusLine(revision));
    return 0;
  }
  // A new revision deploying that one's build again (400 unless it was DEPLOYED).
  const updated = await client.request<Deployment>("POST", `${path}/redeploy`);
  const newRevisionId = updated.latest_revision_id;
  if (!newRevisionId) return fail("revisions", "the control plane answered no revision for the redeploy");
  if (!follow) {
    const created = await client.request<Revision>("GET", `/v2/deployments/${deployment.id}/revisions/${newRevisionId}`);
    if (json) printJson(created);
    else process.stdout.write(`${created.id}\n`);
    return 0;
  }
  if (!json) process.stderr.write(`redeploying revision ${revisionId} of ${deployment.name} as revision ${newRevisionId}\n`);
  return followToOutcome("revisions", client, updated, newRevisionId, json);
}

/** A control plane of an earlier release answers no conditions. */
const conditionsOf = (revision: Revision) => revision.conditions ?? [];

/** The status, and whether the revision serves or was replaced, as its conditions say: `DEPLOYED (serving)`. */
function statusWithRole(revision: Revision): string {
  const holds = (type: string) => conditionsOf(revision).some((c) => c.type === type && c.status === "True");
  if (holds("Serving")) return `${revision.status} (serving)`;
  if (holds("Replaced")) return `${revision.status} (replaced)`;
  return revision.status;
}

function details(deployment: Deployment, revision: Revision): string {
  return table(
    ["FIELD", "VALUE"],
    [
      ["id", revision.id],
      ["deployment", `${deployment.name} (${deployment.id})`],
      ["status", statusWithRole(revision)],
      ["reason", revision.status_message ?? "-"],
      // One row per condition: built, serving, healthy, replaced.
      ...conditionsOf(revision).map((c) => [c.type.toLowerCase(), `${c.status} (${c.reason})`]),
      ["created", revision.created_at],
      ["updated", revision.updated_at],
    ],
  );
}
