import { parseArgs } from "node:util";
import { parsedOrError } from "../process.js";
import { DEPLOYMENTS_USAGE } from "../usage.js";
import { CONNECTION_OPTIONS, connect, type Deployment, type Page } from "./client.js";
import { fail, failWith, printJson, table } from "./output.js";

/** `berth deployments list|get|delete`. */
export async function deploymentsCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: { ...CONNECTION_OPTIONS, "name-contains": { type: "string" }, limit: { type: "string" } },
    }),
  );
  if (parsed instanceof Error) return fail("deployments", `${parsed.message}\n\n${DEPLOYMENTS_USAGE}`, 2);
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(DEPLOYMENTS_USAGE);
    return 0;
  }
  const [action, ref, ...extra] = positionals;
  const client = connect(values);
  const json = values.json === true;
  try {
    if (action === "list" && ref === undefined) {
      const query = new URLSearchParams({ limit: values.limit ?? "20" });
      if (values["name-contains"]) query.set("name_contains", values["name-contains"]);
      const page = await client.request<Page<Deployment>>("GET", `/v2/deployments?${query}`);
      if (json) printJson(page);
      else process.stdout.write(listTable(page.resources));
      return 0;
    }
    if (action === "get" && ref !== undefined && extra.length === 0) {
      const deployment = await client.deployment(ref);
      if (json) printJson(deployment);
      else process.stdout.write(details(deployment));
      return 0;
    }
    if (action === "delete" && ref !== undefined && extra.length === 0) {
      const deployment = await client.deployment(ref);
      await client.request("DELETE", `/v2/deployments/${deployment.id}`);
      if (json) printJson({ deleted: deployment.id, name: deployment.name });
      else process.stdout.write(`deleted ${deployment.name} (${deployment.id})\n`);
      return 0;
    }
  } catch (error) {
    return failWith("deployments", error);
  }
  return fail("deployments", `expected list, get <deployment> or delete <deployment>\n\n${DEPLOYMENTS_USAGE}`, 2);
}

function listTable(deployments: Deployment[]): string {
  if (deployments.length === 0) return "no deployments\n";
  return table(
    ["NAME", "ID", "STATUS", "URL", "UPDATED"],
    deployments.map((d) => [d.name, d.id, d.status, d.source_config.custom_url ?? "-", d.updated_at]),
  );
}

function details(d: Deployment): string {
  return table(
    ["FIELD", "VALUE"],
    [
      ["name", d.name],
      ["id", d.id],
      ["source", d.source],
      ["status", d.status],
      ["url", d.source_config.custom_url ?? "-"],
      ["latest revision", d.latest_revision_id ?? "-"],
      ["active revision", d.active_revision_id ?? "-"],
      ["created", d.created_at],
      ["updated", d.updated_at],
    ],
  );
}
