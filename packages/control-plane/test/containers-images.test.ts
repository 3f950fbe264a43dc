// Runs in the SQLite pass only: its subject is container builds and images,
// where the control plane's database plays no part.
import type Docker from "dockerode";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type ControlPlane,
  createDeployment,
  type Deployment,
  type Revision,
  startControlPlane,
  uniqueName,
  freePort,
} from "@berth/test-support";
import { finalRevision, logsOf } from "@berth/test-support";
import { containerEngine } from "@berth/test-support/container-engine";
import { pushTestImage } from "./helpers/test-image.js";

const engine = await containerEngine();
const registry = process.env.BERTH_TEST_REGISTRY ?? "";
const skip =
  engine.skip || (!registry && "BERTH_TEST_REGISTRY (a loopback registry, see scripts/container-engine.sh) is not set");
if (!engine.skip && !registry) process.stderr.write(`\n*** SKIPPED: the image tests: ${skip} ***\n\n`);

describe("a docker listener runs external images", { skip }, () => {
  let cp: ControlPlane;
  let docker: Docker;
  const image = `${registry}/berth-test/agent-${Date.now()}:v1`;

  before(async () => {
    docker = engine.docker!;
    await pushTestImage(docker, image, { serveraddress: registry });
    const secretsFile = join(mkdtempSync(join(tmpdir(), "berth-secrets-")), "secrets.json");
    writeFileSync(secretsFile, JSON.stringify({ "model-provider": { "api-key": "sk-from-the-listener" } }));
    cp = await startControlPlane({
      listener: true,
      env: {
        BERTH_LISTENER_COMPUTE: "docker",
        BERTH_CONTAINER_ENGINE: engine.address,
        BERTH_LISTENER_SECRETS_FILE: secretsFile,
        BERTH_DRAIN_TIMEOUT_SECONDS: "2",
        // One request in flight per replica is the target, and replicas leave after 1 s of low load.
        BERTH_AUTOSCALE_TARGET_REQUESTS: "1",
        BERTH_AUTOSCALE_INTERVAL_SECONDS: "0.2",
        BERTH_AUTOSCALE_SCALE_DOWN_SECONDS: "1",
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
    // What the server wrote as it started reaches the revision's server log (the engine's stream of a container that
    // is only created ends at once, empty).
    const serverSaid = async () =>
      (await logsOf(cp.admin, created.id, revision.id, "deploy")).some((line) =>
        line.message.includes("external image: listening"),
      );
    const deadline = Date.now() + 30_000;
    while (!(await serverSaid()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(
      await serverSaid(),
      (await logsOf(cp.admin, created.id, revision.id, "deploy")).map((line) => line.message).join("\n"),
    );

    const [info] = await docker.listContainers({ filters: { label: [`berth.deployment=${created.id}`] } });
    const inspected = await docker.getContainer(info!.Id).inspect();
    assert.equal(inspected.HostConfig.Memory, 256 * 1024 * 1024);
    assert.equal(inspected.HostConfig.NanoCpus, 0.5e9);
    assert.equal(inspected.Config.Labels.team, "agents");
    assert.equal(inspected.Config.Labels["annotation.owner"], "ops");
    assert.deepEqual(inspected.HostConfig.SecurityOpt, ["no-new-privileges"]);
    assert.equal(revision.image_digest, inspected.Image, "the revision records the pulled image's content id");

    const deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${created.id}`)).body;
    const response = await fetch(`${deployment.source_config.custom_url}/info`, { headers: { "x-api-key": cp.adminKey } });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { greeting: string; model_key: string };
    assert.equal(body.greeting, "from the api");
    assert.equal(body.model_key, "sk-from-the-listener");
  });

  test("min_scale 2: two containers serve the revision, and the router sends requests to both in turn", async () => {
    const created = await deployImage(uniqueName("ext-two"), { resource_spec: { min_scale: 2, max_scale: 2 } });
    const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const containers = await docker.listContainers({ filters: { label: [`berth.deployment=${created.id}`, "berth.role=api"] } });
    assert.equal(containers.length, 2);
    const deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${created.id}`)).body;
    const hosts = new Set<string>();
    for (let call = 0; call < 6; call++) {
      const response = await fetch(`${deployment.source_config.custom_url}/info`, { headers: { "x-api-key": cp.adminKey } });
      assert.equal(response.status, 200);
      hosts.add(((await response.json()) as { host: string }).host);
    }
    assert.equal(hosts.size, 2, `requests reached ${[...hosts].join(", ")}`);
    assert.deepEqual(
      new Set(containers.map((container) => container.Id.slice(0, 12))),
      hosts,
      "each replica's container answered",
    );
  });

  test("max_scale: requests in flight grow the replicas up to max_scale, and they shrink back to min_scale when it ends", async () => {
    const created = await deployImage(uniqueName("ext-auto"), { resource_spec: { min_scale: 1, max_scale: 3 } });
    const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const running = async () =>
      (await docker.listContainers({ filters: { label: [`berth.deployment=${created.id}`, "berth.role=api"] } })).length;
    assert.equal(await running(), 1);
    const url = (await cp.admin.get<Deployment>(`/v2/deployments/${created.id}`)).body.source_config.custom_url!;
    const failures: number[] = [];
    let loaded = true;
    let peak = 1;
    // Four clients keep a request in flight each until the deployment has grown to max_scale.
    const clients = Array.from({ length: 4 }, async () => {
      while (loaded) {
        const response = await fetch(`${url}/hold?ms=300`, { headers: { "x-api-key": cp.adminKey } });
        if (response.status !== 200) failures.push(response.status);
        await response.arrayBuffer();
      }
    });
    while (peak < 3) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      peak = Math.max(peak, await running());
    }
    loaded = false;
    await Promise.all(clients);
    while ((await running()) > 1) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(failures, [], "no request failed while replicas came and went");
    // The listener ships its log lines after the fact: the scale-down's line may reach the control plane after the container left.
    const deployLog = async () => (await logsOf(cp.admin, created.id, revision.id, "deploy")).map((line) => line.message);
    let deploy = await deployLog();
    for (let waited = 0; waited < 30_000 && !deploy.some((line) => line.startsWith("Scaling from 2 to 1")); waited += 200) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      deploy = await deployLog();
    }
    assert.ok(
      deploy.some((line) => /^Scaling from 1 to [23] replicas: \d+ requests in flight/.test(line)),
      deploy.join("\n"),
    );
    assert.ok(
      deploy.some((line) => line.startsWith("Scaling from 2 to 1 replicas")),
      deploy.join("\n"),
    );
    // Four requests in flight ask for four replicas: max_scale caps them at three.
    assert.ok(!deploy.some((line) => /to \d{2,}|to [4-9] replicas/.test(line)), deploy.join("\n"));
  });

  test("volumes: a claim becomes the deployment's named volume (removed with it), emptyDir a tmpfs, hostPath outside the allow-list is refused", async () => {
    const created = await deployImage(uniqueName("ext-vol"), {
      resource_spec: {
        volumes: [
          { name: "state", persistentVolumeClaim: { claimName: "state" } },
          { name: "scratch", emptyDir: { sizeLimit: "64Mi" } },
        ],
        volume_mounts: [
          { name: "state", mountPath: "/state" },
          { name: "scratch", mountPath: "/scratch" },
        ],
      },
    });
    const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const [info] = await docker.listContainers({ filters: { label: [`berth.deployment=${created.id}`] } });
    const mounts = (await docker.getContainer(info!.Id).inspect()).Mounts;
    assert.ok(
      mounts.some(
        (mount) => mount.Type === "volume" && mount.Name === `berth-${created.id}-state` && mount.Destination === "/state",
      ),
    );
    // Docker echoes a tmpfs mount in HostConfig.Mounts; podman's engine reports it in HostConfig.Tmpfs.
    const { Mounts: hostMounts, Tmpfs: tmpfs } = (await docker.getContainer(info!.Id).inspect()).HostConfig;
    assert.ok(
      (hostMounts ?? []).some((mount) => mount.Type === "tmpfs" && mount.Target === "/scratch") ||
        tmpfs?.["/scratch"] !== undefined,
    );

    const refused = await deployImage(uniqueName("ext-host"), {
      resource_spec: {
        volumes: [{ name: "etc", hostPath: { path: "/etc" } }],
        volume_mounts: [{ name: "etc", mountPath: "/host-etc" }],
      },
    });
    const failed = await finalRevision(cp.admin, refused.id, refused.latest_revision_id!);
    assert.equal(failed.status, "DEPLOY_FAILED");
    assert.match(failed.status_message ?? "", /hostPath \/etc is not under a folder this listener allows/);

    assert.equal((await cp.admin.delete(`/v2/deployments/${created.id}`)).status, 204);
    const deadline = Date.now() + 60_000;
    const volumesLeft = async () =>
      (await docker.listVolumes({ filters: { label: [`berth.deployment=${created.id}`] } })).Volumes ?? [];
    while ((await volumesLeft()).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(await volumesLeft(), []);
  });

  test("init containers run to completion first; sidecars run in the server's network and end with it", async () => {
    const node = (code: string) => ({ image, command: ["node", "-e", code] });
    const created = await deployImage(uniqueName("ext-pod"), {
      resource_spec: {
        init_containers: [{ name: "migrate", ...node("console.log('migrated')") }],
        sidecars: [
          {
            name: "prober",
            // Reaches the server on localhost: the sidecar shares its network.
            ...node("setInterval(() => fetch('http://127.0.0.1:8000/ok').then((r) => console.log('probe', r.status)), 200)"),
          },
        ],
      },
    });
    const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const all = await docker.listContainers({ all: true, filters: { label: [`berth.deployment=${created.id}`] } });
    const roles = all.map((container) => container.Labels["berth.managed"]).sort();
    assert.deepEqual(roles, ["server", "sidecar"], "the init container is gone once done");
    const sidecar = all.find((container) => container.Labels["berth.managed"] === "sidecar")!;
    const server = all.find((container) => container.Labels["berth.managed"] === "server")!;
    assert.equal((await docker.getContainer(sidecar.Id).inspect()).HostConfig.NetworkMode, `container:${server.Id}`);
    let probed = "";
    while (!probed.includes("probe 200")) {
      probed = (await docker.getContainer(sidecar.Id).logs({ stdout: true, stderr: true })).toString("utf8");
      if (!probed.includes("probe 200")) await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const failing = await deployImage(uniqueName("ext-init-fails"), {
      resource_spec: { init_containers: [{ name: "migrate", ...node("console.error('no database'); process.exit(3)") }] },
    });
    const failed = await finalRevision(cp.admin, failing.id, failing.latest_revision_id!);
    assert.equal(failed.status, "DEPLOY_FAILED");
    assert.match(failed.status_message ?? "", /Init container migrate exited with code 3:[\s\S]*no database/);

    assert.equal((await cp.admin.delete(`/v2/deployments/${created.id}`)).status, 204);
    const deadline = Date.now() + 60_000;
    const left = async () => docker.listContainers({ all: true, filters: { label: [`berth.deployment=${created.id}`] } });
    while ((await left()).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(await left(), []);
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

/** A port nothing listens on now, for the control plane's registry. */
describe("internal_image: pushed with a push token to the control plane's registry, then deployed", { skip: engine.skip }, () => {
  let cp: ControlPlane;
  let docker: Docker;
  let registryHost: string;

  before(async () => {
    docker = engine.docker!;
    const port = await freePort();
    registryHost = `127.0.0.1:${port}`;
    cp = await startControlPlane({
      listener: true,
      env: {
        BERTH_LISTENER_COMPUTE: "docker",
        BERTH_CONTAINER_ENGINE: engine.address,
        BERTH_REGISTRY_PORT: String(port),
        BERTH_DRAIN_TIMEOUT_SECONDS: "2",
      },
    });
  });
  after(() => cp?.stop());

  const newImageDeployment = () =>
    createDeployment(cp.admin, {
      name: uniqueName("pushed"),
      source: "internal_image",
      source_config: {},
      source_revision_config: {},
      secrets: [{ name: "GREETING", value: "pushed" }],
    });

  test("push-token answers a short-lived credential for the deployment's repository; the push works with it", async () => {
    const deployment = await newImageDeployment();
    const issued = await cp.admin.post<{ token: string; registry_url: string }>(`/v2/deployments/${deployment.id}/push-token`);
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    assert.equal(issued.body.registry_url, `${registryHost}/d-${deployment.id}`);
    const ref = `${issued.body.registry_url}/agent:v1`;
    await pushTestImage(docker, ref, { username: "berth", password: issued.body.token, serveraddress: registryHost });

    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      source_revision_config: { image_uri: ref },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const revision = await finalRevision(cp.admin, deployment.id, patched.body.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const current = (await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body;
    const response = await fetch(`${current.source_config.custom_url}/info`, { headers: { "x-api-key": cp.adminKey } });
    assert.equal(((await response.json()) as { greeting: string }).greeting, "pushed");

    const again = await cp.admin.post<Revision>(`/v2/deployments/${deployment.id}/revisions`);
    assert.equal(again.status, 201);
    assert.equal((await finalRevision(cp.admin, deployment.id, again.body.id)).status, "DEPLOYED");

    // Deleting the deployment deletes its repository from the registry's storage.
    const repository = join(cp.dataDir, "registry", "data", "docker", "registry", "v2", "repositories", `d-${deployment.id}`);
    assert.ok(existsSync(repository), "the pushed repository is in the registry's storage");
    assert.equal((await cp.admin.delete(`/v2/deployments/${deployment.id}`)).status, 204);
    const deadline = Date.now() + 60_000;
    while (existsSync(repository) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(existsSync(repository), false, "the repository went with the deployment");
  });

  test("a push token reaches only its own deployment's repository, and the registry refuses anyone without one", async () => {
    const [mine, other] = [await newImageDeployment(), await newImageDeployment()];
    const { body } = await cp.admin.post<{ token: string }>(`/v2/deployments/${mine.id}/push-token`);
    await assert.rejects(
      pushTestImage(docker, `${registryHost}/d-${other.id}/agent:v1`, {
        username: "berth",
        password: body.token,
        serveraddress: registryHost,
      }),
      "another deployment's repository is refused",
    );
    const anonymous = await fetch(`http://${registryHost}/v2/d-${mine.id}/agent/tags/list`);
    assert.equal(anonymous.status, 401);
    const forged = await fetch(`${cp.url}/v1/registry/token?service=berth-registry&scope=repository:d-${mine.id}/agent:push`, {
      headers: { authorization: `Basic ${Buffer.from("berth:not-a-token").toString("base64")}` },
    });
    assert.equal(forged.status, 401);
  });
});
