import { parseArgs } from "node:util";
import { parsedOrError } from "../process.js";
import { REVISIONS_USAGE } from "../usage.js";
import { CONNECTION_OPTIONS, ControlPlaneClient, type Page, type Revision } from "./client.js";
import { fail, failWith, printJson, table } from "./output.js";

/** `berth revisions list|get <deployment>`. */
export async function revisionsCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({ args: argv, allowPositionals: true, options: { ...CONNECTION_OPTIONS, limit: { type: "string" } } }),
  );
  if (parsed instanceof Error) return fail("revisions", `${parsed.message}\n\n${REVISIONS_USAGE}`, 2);
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(REVISIONS_USAGE);
    return 0;
  }
  const [action, ref, revisionRef, ...extra] = positionals;
  const usable =
    ref !== undefined && extra.length === 0 && (action === "get" || (action === "list" && revisionRef === undefined));
  if (!usable) return fail("revisions", `expected list <deployment> or get <deployment> [revision]\n\n${REVISIONS_USAGE}`, 2);
  const client = new ControlPlaneClient(values);
  const json = values.json === true;
  try {
    const deployment = await client.deployment(ref);
    const base = `/v2/deployments/${deployment.id}/revisions`;
    if (action === "list") {
      const page = await client.request<Page<Revision>>("GET", `${base}?limit=${encodeURIComponent(values.limit ?? "20")}`);
      if (json) printJson(page);
      else
        process.stdout.write(
          table(
            ["ID", "STATUS", "CREATED", "MESSAGE"],
            page.resources.map((r) => [r.id, r.status, r.created_at, r.status_message ?? ""]),
          ),
        );
      return 0;
    }
    const revisionId = revisionRef ?? deployment.latest_revision_id;
    if (!revisionId) return fail("revisions", `${deployment.name} has no revision`);
    const revision = await client.request<Revision>("GET", `${base}/${revisionId}`);
    if (json) printJson(revision);
    else
      process.stdout.write(
        table(
          ["FIELD", "VALUE"],
          [
            ["id", revision.id],
            ["deployment", `${deployment.name} (${deployment.id})`],
            ["status", revision.status],
            ["reason", revision.status_message ?? "-"],
            ["created", revision.created_at],
            ["updated", revision.updated_at],
          ],
        ),
      );
    return 0;
  } catch (error) {
    return failWith("revisions", error);
  }
}
