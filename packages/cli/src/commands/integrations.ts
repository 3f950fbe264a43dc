import type { Integration } from "@berth/control-plane/wire";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parsedOrError } from "../process.js";
import { INTEGRATIONS_USAGE } from "../usage.js";
import { CONNECTION_OPTIONS, type ControlPlaneClient, connect } from "./client.js";
import { credentialsFromFiles, UsageError } from "./integration-credentials.js";
import { fail, failWith, printJson, table } from "./output.js";
import { postReceiveHook } from "./post-receive-hook.js";

/** Creation and a secret's rotation answer the webhook secret, this once. */
type IntegrationWithSecret = Integration & { webhook_secret: string };

const INTEGRATIONS = "/v1/integrations/repo_host";
const KINDS = ["git", "github", "gitlab", "gitea", "local"] as const;

/** `berth integrations add|list|hook`: the workspace's git integrations, over the control plane's API. */
export async function integrationsCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        ...CONNECTION_OPTIONS,
        name: { type: "string" },
        kind: { type: "string" },
        "base-url": { type: "string" },
        "token-file": { type: "string" },
        "ssh-key-file": { type: "string" },
        "known-hosts-file": { type: "string" },
        repo: { type: "string", multiple: true },
        "webhook-secret-file": { type: "string" },
        "rotate-secret": { type: "boolean" },
      },
    }),
  );
  if (parsed instanceof Error) return fail("integrations", `${parsed.message}\n\n${INTEGRATIONS_USAGE}`, 2);
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(INTEGRATIONS_USAGE);
    return 0;
  }
  const [action, ref, ...extra] = positionals;
  const client = connect(values);
  const json = values.json === true;
  try {
    if (action === "list" && ref === undefined) {
      const integrations = await client.request<Integration[]>("GET", `${INTEGRATIONS}/install`);
      if (json) printJson(integrations);
      else process.stdout.write(listTable(integrations));
      return 0;
    }
    if (action === "add" && ref === undefined) {
      if (!values.name) throw new UsageError("integrations add needs --name");
      const kind = values.kind ?? "git";
      if (!(KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind must be one of ${KINDS.join(", ")}`);
      const webhookSecret = secretFromFile(values["webhook-secret-file"]);
      const created = await client.request<IntegrationWithSecret>("POST", INTEGRATIONS, {
        name: values.name,
        kind,
        ...(values["base-url"] === undefined ? {} : { base_url: values["base-url"] }),
        ...(webhookSecret === undefined ? {} : { webhook_secret: webhookSecret }),
        credentials: credentialsFromFiles(values),
        repos: values.repo ?? [],
      });
      if (json) printJson(created);
      else process.stdout.write(createdText(client, created));
      return 0;
    }
    if (action === "hook" && ref !== undefined && extra.length === 0) {
      const integration = await integrationOf(client, ref);
      if (integration.kind !== "local") {
        throw new Error(
          `${integration.name} is a ${integration.kind} integration: its host sends the push webhooks itself, to ${client.url}${integration.webhook_url}`,
        );
      }
      const fromFile = secretFromFile(values["webhook-secret-file"]);
      if ((fromFile === undefined) === (values["rotate-secret"] !== true)) {
        throw new UsageError(
          "integrations hook needs the webhook secret: --webhook-secret-file <file> (what add printed) or --rotate-secret",
        );
      }
      const webhookSecret =
        fromFile ??
        (
          await client.request<IntegrationWithSecret>("PATCH", `${INTEGRATIONS}/${integration.id}`, {
            rotate_webhook_secret: true,
          })
        ).webhook_secret;
      if (fromFile === undefined)
        process.stderr.write(`rotated the webhook secret of ${integration.name}: hooks installed before stop working\n`);
      process.stdout.write(
        postReceiveHook({
          integrationName: integration.name,
          webhookUrl: `${client.url}${integration.webhook_url}`,
          webhookSecret,
          nodePath: process.execPath,
        }),
      );
      return 0;
    }
  } catch (error) {
    return error instanceof UsageError ? fail("integrations", error.message, 2) : failWith("integrations", error);
  }
  return fail("integrations", `expected add, list or hook <integration>\n\n${INTEGRATIONS_USAGE}`, 2);
}

/** An integration of the workspace by id or name. */
export async function integrationOf(client: ControlPlaneClient, ref: string): Promise<Integration> {
  const integrations = await client.request<Integration[]>("GET", `${INTEGRATIONS}/install`);
  const found = integrations.find((integration) => integration.id === ref) ?? integrations.find((i) => i.name === ref);
  if (found) return found;
  const names = integrations.map((integration) => `  ${integration.name} (${integration.id}, ${integration.kind})`);
  throw new Error(
    names.length === 0
      ? `no integration "${ref}": the workspace has none (berth integrations add)`
      : `no integration "${ref}"; the workspace has:\n${names.join("\n")}`,
  );
}

/** A webhook secret kept in a file, less the newline an editor or `echo` ends it with. */
function secretFromFile(file: string | undefined): string | undefined {
  return file === undefined ? undefined : readFileSync(file, "utf8").replace(/\r?\n$/, "");
}

function listTable(integrations: Integration[]): string {
  if (integrations.length === 0) return "no integrations\n";
  return table(
    ["NAME", "ID", "KIND", "BASE URL", "CREDENTIALS"],
    integrations.map((i) => [i.name, i.id, i.kind, i.base_url ?? "-", i.credentials ?? "-"]),
  );
}

function createdText(client: ControlPlaneClient, created: IntegrationWithSecret): string {
  return `${table(
    ["FIELD", "VALUE"],
    [
      ["name", created.name],
      ["id", created.id],
      ["kind", created.kind],
      ["base url", created.base_url ?? "-"],
      ["credentials", created.credentials ?? "-"],
      ["webhook url", `${client.url}${created.webhook_url}`],
      ["webhook secret", created.webhook_secret],
    ],
  )}The webhook secret is shown this once: give it to the host's push webhook${
    created.kind === "local" ? " (berth integrations hook --webhook-secret-file)" : ""
  }.\n`;
}
