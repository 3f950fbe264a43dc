import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parsedOrError } from "../process.js";
import { SECRETS_USAGE } from "../usage.js";
import { CONNECTION_OPTIONS, type ControlPlaneClient, connect, type Deployment, type Revision } from "./client.js";
import { mergeSecrets, type SecretEntry } from "./env-file.js";
import { followToOutcome } from "./follow.js";
import { fail, failWith, printJson } from "./output.js";
import { readSecretLine } from "./secret-input.js";

/** `berth secrets list|set|unset <deployment> [NAME]`: names are shown, values never. */
export async function secretsCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: { ...CONNECTION_OPTIONS, "from-file": { type: "string" }, "no-follow": { type: "boolean" } },
    }),
  );
  if (parsed instanceof Error) return fail("secrets", `${parsed.message}\n\n${SECRETS_USAGE}`, 2);
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(SECRETS_USAGE);
    return 0;
  }
  const [action, ref, name, ...extra] = positionals;
  const wellFormed =
    ref !== undefined &&
    extra.length === 0 &&
    ((action === "list" && name === undefined) || ((action === "set" || action === "unset") && name !== undefined));
  if (!wellFormed)
    return fail("secrets", `expected list <deployment>, set <deployment> NAME or unset <deployment> NAME\n\n${SECRETS_USAGE}`, 2);
  if (values["from-file"] !== undefined && action !== "set") return fail("secrets", "--from-file goes with set", 2);

  const client = connect(values);
  const json = values.json === true;
  try {
    const deployment = await client.deployment(ref);
    const current: SecretEntry[] = deployment.secrets;
    if (action === "list") {
      const names = current.map((secret) => secret.name);
      if (json) printJson(names);
      else if (names.length === 0) process.stderr.write(`${deployment.name} has no secrets\n`);
      else process.stdout.write(names.map((secretName) => `${secretName}\n`).join(""));
      return 0;
    }
    let next: SecretEntry[];
    if (action === "set") {
      const value = await secretValue(values["from-file"], `value of ${name} (not shown): `);
      if (value === "") return fail("secrets", `empty value for ${name}; to remove a secret: berth secrets unset`, 2);
      next = mergeSecrets(current, [{ name: name!, value }]);
    } else {
      if (!current.some((secret) => secret.name === name)) return fail("secrets", `${deployment.name} has no secret ${name}`);
      next = current.filter((secret) => secret.name !== name);
    }
    const updated = await client.request<Deployment>("PATCH", `/v2/deployments/${deployment.id}`, { secrets: next });
    return await applied(client, updated, `${action === "set" ? "set" : "removed"} ${name}`, {
      json,
      follow: values["no-follow"] !== true,
    });
  } catch (error) {
    return failWith("secrets", error);
  }
}

/**
 * The value: the file's content as it is (--from-file), else typed at a prompt that does not echo, else everything
 * piped on stdin less the one newline `echo` adds.
 */
async function secretValue(file: string | undefined, prompt: string): Promise<string> {
  if (file !== undefined) return readFileSync(file, "utf8");
  if (process.stdin.isTTY) return readSecretLine(prompt);
  let text = "";
  for await (const chunk of process.stdin) text += String(chunk);
  return text.replace(/\r?\n$/, "");
}

/**
 * A secrets change makes a new revision with the same source: followed like `berth deploy` (URL on stdout once
 * DEPLOYED). A deployment still waiting for its first upload gets the secrets with that upload.
 */
async function applied(
  client: ControlPlaneClient,
  deployment: Deployment,
  what: string,
  { json, follow }: { json: boolean; follow: boolean },
): Promise<number> {
  const revisionId = deployment.latest_revision_id;
  if (!revisionId) return fail("secrets", "the control plane answered no revision for the change");
  const revision = await client.request<Revision>("GET", `/v2/deployments/${deployment.id}/revisions/${revisionId}`);
  if (!json) process.stderr.write(`${what} on ${deployment.name}: revision ${revision.id}\n`);
  if (revision.status === "CREATING" || !follow) {
    if (json) printJson(revision);
    else if (revision.status === "CREATING")
      process.stderr.write(`${deployment.name} has no source yet: its first deploy brings the secrets\n`);
    else process.stdout.write(`${revision.id}\n`);
    return 0;
  }
  return followToOutcome("secrets", client, deployment, revisionId, json);
}
