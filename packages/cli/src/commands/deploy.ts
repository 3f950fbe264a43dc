import { existsSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parsedOrError } from "../process.js";
import { DEPLOY_USAGE } from "../usage.js";
import { CONNECTION_OPTIONS, connect, type ControlPlaneClient, type Deployment } from "./client.js";
import { deployRepository, REPO_OPTIONS, repoOnlyFlags } from "./deploy-repo.js";
import { mergeSecrets, readEnvFile, type SecretEntry } from "./env-file.js";
import { followToOutcome } from "./follow.js";
import { UsageError } from "./integration-credentials.js";
import { fail, failWith } from "./output.js";
import { listProject, MAX_BYTES, packTarball, WARN_BYTES } from "./pack.js";
import { projectWarnings } from "./project-warnings.js";
import { uploadTarball } from "./upload.js";

const CONFIG = "langgraph.json";

/**
 * `berth deploy [dir] [--name NAME] [--env-file FILE]`: pack, upload, create or update the deployment, follow its new
 * revision; with `--repo URL`, the same for a repo_host deployment.
 */
export async function deployCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: { ...CONNECTION_OPTIONS, ...REPO_OPTIONS, name: { type: "string" }, "env-file": { type: "string" } },
    }),
  );
  if (parsed instanceof Error) return fail("deploy", `${parsed.message}\n\n${DEPLOY_USAGE}`, 2);
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(DEPLOY_USAGE);
    return 0;
  }
  if (positionals.length > 1) return fail("deploy", `one project folder at most\n\n${DEPLOY_USAGE}`, 2);
  let secrets: SecretEntry[] | undefined;
  if (values["env-file"] !== undefined) {
    try {
      secrets = readEnvFile(values["env-file"]);
    } catch (error) {
      return fail("deploy", `--env-file: ${(error as Error).message}`, 2);
    }
  }
  const json = values.json === true;
  const say = (text: string) => {
    if (!json) process.stderr.write(text);
  };
  if (secrets !== undefined) say(`secrets from ${values["env-file"]}: ${secrets.map((s) => s.name).join(", ") || "none"}\n`);
  const { repo } = values;
  if (repo !== undefined) {
    if (positionals.length > 0) return fail("deploy", "a project folder or --repo, not both", 2);
    try {
      return await deployRepository(connect(values), { ...values, repo }, { name: values.name, secrets, json, say });
    } catch (error) {
      return error instanceof UsageError ? fail("deploy", error.message, 2) : failWith("deploy", error);
    }
  }
  const repoOnly = repoOnlyFlags(values);
  if (repoOnly.length > 0) return fail("deploy", `${repoOnly.join(", ")}: only with --repo\n\n${DEPLOY_USAGE}`, 2);
  const root = resolve(positionals[0] ?? ".");
  if (!existsSync(root) || !statSync(root).isDirectory()) return fail("deploy", `${root} is not a folder`, 2);
  if (!existsSync(join(root, CONFIG))) return fail("deploy", `${root} has no ${CONFIG}`, 2);
  const name = values.name ?? basename(root);

  // What the deployment's server would warn about (or refuse) in langgraph.json is said before anything leaves the machine.
  const config = projectWarnings(root, join(root, CONFIG));
  if ("invalid" in config) return fail("deploy", config.invalid);
  for (const warning of config.warnings) process.stderr.write(`berth deploy: warning: ${warning}\n`);

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

  const client = connect(values);
  let deployment: Deployment;
  try {
    deployment = await createOrFind(client, name, say, secrets ?? []);
    const { upload_url, object_path } = await client.request<{ upload_url: string; object_path: string }>(
      "POST",
      `/v2/deployments/${deployment.id}/upload-url`,
    );
    await uploadTarball(upload_url, tarball, !json);
    deployment = await client.request<Deployment>("PATCH", `/v2/deployments/${deployment.id}`, {
      source_revision_config: { source_tarball_path: object_path },
      // The file's variables over the deployment's other secrets (sent back masked, which keeps them).
      ...(secrets === undefined ? {} : { secrets: mergeSecrets(deployment.secrets, secrets) }),
    });
  } catch (error) {
    return failWith("deploy", error);
  }
  const revisionId = deployment.latest_revision_id;
  if (!revisionId) return fail("deploy", "the control plane answered no revision for the upload");
  return followToOutcome("deploy", client, deployment, revisionId, json);
}

async function createOrFind(
  client: ControlPlaneClient,
  name: string,
  say: (text: string) => void,
  secrets: SecretEntry[],
): Promise<Deployment> {
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
    // Sent at creation too, so that a name the control plane refuses is refused before anything is uploaded.
    secrets,
  });
  say(`created deployment ${name} (${created.id})\n`);
  return created;
}
