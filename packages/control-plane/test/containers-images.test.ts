import type Docker from "dockerode";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { pack } from "tar-fs";
import { type ControlPlane, createDeployment, type Deployment, startControlPlane, uniqueName } from "@berth/test-support";
import { FIXTURES, finalRevision, logsOf } from "./helpers/deploy.js";
import { containerEngine } from "./helpers/engine.js";

const engine = await containerEngine();
const registry = process.env.BERTH_TEST_REGISTRY ?? "";
const skip =
  engine.skip || (!registry && "BERTH_TEST_REGISTRY (a loopback registry, see scripts/container-engine.sh) is not set");
if (!engine.skip && !registry) process.stderr.write(`\n*** SKIPPED: the image tests: ${skip} ***\n\n`);

/** Builds the stand-in server image, pushes it to the loopback registry and removes the local copy: the listener must pull it. */
async function pushTestImage(docker: Docker, ref: string): Promise<void> {
  const base = process.env.BERTH_NODE_BASE_IMAGE || `berth/node-base:${process.versions.node.split(".")[0]}`;
  const context = pack(join(FIXTURES, "external-image"), {
    finalize: false,
    finish(archive) {
      archive.entry({ name: "Dockerfile" }, `FROM ${base}\nCOPY server.mjs /srv/server.mjs\nCMD ["node", "/srv/server.mjs"]\n`);
      archive.finalize();
    },
  });
  await new Promise((resolve, reject) =>
    docker.buildImage(context, { t: ref }, (error, stream) =>
      error ? reject(error) : docker.modem.followProgress(stream!, (failed) => (failed ? reject(failed) : resolve(undefined))),
    ),
  );
  const pushed = await docker.getImage(ref).push({ authconfig: { serveraddress: registry } });
  await new Promise((resolve, reject) =>
    docker.modem.followProgress(pushed, (failed, events: { error?: string }[]) =>
      failed || events.some((event) => event.error) ? reject(failed ?? new Error(JSON.stringify(events))) : resolve(undefined),
    ),
  );
  await docker.getImage(ref).remove({ force: true });
}

describe("a docker listener runs external images", { skip }, () => {
  let cp: ControlPlane;
  let docker: Docker;
  const image = `${registry}/berth-test/agent-${Date.now()}:v1`;

  before(async () => {
    docker = engine.docker!;
    await pushTestImage(docker, image);
    const secretsFile = join(mkdtempSync(join(tmpdir(), "berth-secrets-")), "secrets.json");
    writeFileSync(secretsFile, JSON.stringify({ "model-provider": { "api-key": "sk-from-the-listener" } }));
    cp = await startControlPlane({
      listener: true,
      env: {
        BERTH_LISTENER_COMPUTE: "docker",
        BERTH_CONTAINER_ENGINE: engine.address,
        BERTH_LISTENER_SECRETS_FILE: secretsFile,
        BERTH_DRAIN_TIMEOUT_SECONDS: "2",
      },
    });
  });
  after(() => cp?.stop());

  const deployImage = (name: string, extra: { resource_spec?: unknown; custom_url?: string; secret_references?: unknown }) =>
    createDeployment(cp.admin, {
      name,
      source: "external_image",
      source_config: {
        resource_spec: extra.resource_spec ?? null,
        ...(extra.custom_url ? { custom_url: extra.custom_url } : {}),
      },
      source_revision_config: { image_uri: image },
      secrets: [{ name: "GREETING", value: "from the api" }],
      secret_references: extra.secret_references ?? [],
    });

  test("pulled from the registry and run with resource_spec's limits and labels, secrets and secret_references in its environment", async () => {
    const created = await deployImage(uniqueName("ext"), {
      resource_spec: { memory_limit_mb: 256, cpu_limit: 0.5, labels: { team: "agents" }, annotations: { owner: "ops" } },
      secret_references: [{ name: "MODEL_KEY", secret_name: "model-provider", secret_key: "api-key" }],
    });
    const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const deploy = (await logsOf(cp.admin, created.id, revision.id, "deploy")).map((line) => line.message);
    assert.ok(deploy.includes(`Pulling ${image}`), deploy.join("\n"));

    const [info] = await docker.listContainers({ filters: { label: [`berth.deployment=${created.id}`] } });
    const inspected = await docker.getContainer(info!.Id).inspect();
    assert.equal(inspected.HostConfig.Memory, 256 * 1024 * 1024);
    assert.equal(inspected.HostConfig.NanoCpus, 0.5e9);
    assert.equal(inspected.Config.Labels.team, "agents");
    assert.equal(inspected.Config.Labels["annotation.owner"], "ops");
    assert.deepEqual(inspected.HostConfig.SecurityOpt, ["no-new-privileges"]);

    const deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${created.id}`)).body;
    const response = await fetch(`${deployment.source_config.custom_url}/info`, { headers: { "x-api-key": cp.adminKey } });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { greeting: string; model_key: string };
    assert.equal(body.greeting, "from the api");
    assert.equal(body.model_key, "sk-from-the-listener");
  });

  test("custom_url is the deployment's URL", async () => {
    const created = await deployImage(uniqueName("ext-url"), { custom_url: "https://agents.example.com/support" });
    const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${created.id}`)).body;
    assert.equal(deployment.source_config.custom_url, "https://agents.example.com/support");
  });

  test("a secret reference the listener's secret source lacks ends DEPLOY_FAILED naming it", async () => {
    const created = await deployImage(uniqueName("ext-missing"), {
      secret_references: [{ name: "OTHER", secret_name: "model-provider", secret_key: "missing-key" }],
    });
    const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
    assert.equal(revision.status, "DEPLOY_FAILED");
    assert.match(revision.status_message ?? "", /model-provider\/missing-key \(for OTHER\)/);
  });

  test("an image no registry has ends DEPLOY_FAILED with the engine's reason", async () => {
    const created = await createDeployment(cp.admin, {
      name: uniqueName("ext-absent"),
      source: "external_image",
      source_config: {},
      source_revision_config: { image_uri: `${registry}/berth-test/absent:v1` },
      secrets: [],
    });
    const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
    assert.equal(revision.status, "DEPLOY_FAILED");
    assert.match(revision.status_message ?? "", /Pulling .*absent:v1 failed/);
  });
});
