import Docker from "dockerode";
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type ControlPlane,
  createDeployment,
  type Deployment,
  revisionsOf,
  startControlPlane,
  TEST_BACKEND,
  uniqueName,
} from "@berth/test-support";
import { finalRevision } from "@berth/test-support";
import { containerEngine } from "@berth/test-support/container-engine";
import { pushTestImage } from "./helpers/test-image.js";

/**
 * A docker listener against podman's Docker-compatible service instead of
 * Docker Engine: the image is pushed by the Docker engine to the loopback
 * registry, and podman pulls and runs it.
 */

const engine = await containerEngine();
const registry = process.env.BERTH_TEST_REGISTRY ?? "";
const root = process.getuid?.() === 0;
const podmanWorks = spawnSync("podman", ["info"], { stdio: "ignore" }).status === 0;
const skip =
  engine.skip ||
  (!registry && "BERTH_TEST_REGISTRY (a loopback registry, see scripts/container-engine.sh) is not set") ||
  (!podmanWorks && "podman is not installed or does not work (scripts/container-engine.sh sets it up)") ||
  // The engine is what this checks; the control plane's database plays no part, so one pass is enough.
  (TEST_BACKEND !== "sqlite" && "it runs in the SQLite pass (the control plane's database plays no part)");
if (skip) process.stderr.write(`\n*** SKIPPED: the container compute on podman's service: ${skip} ***\n\n`);

/** `podman system service` on a socket of its own, resolved once it answers the Docker API. */
async function startPodmanService(): Promise<{ address: string; docker: Docker; stop: () => Promise<void> }> {
  const socket = join(mkdtempSync(join(tmpdir(), "berth-podman-")), "podman.sock");
  const child: ChildProcess = spawn("podman", ["system", "service", "--time=0", `unix://${socket}`], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const docker = new Docker({ socketPath: socket });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`podman system service exited (${child.exitCode}): ${stderr}`);
    try {
      await docker.ping();
      break;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`podman's service did not answer on ${socket}: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    address: `unix://${socket}`,
    docker,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

describe("a docker listener on podman's Docker-compatible service", { skip }, () => {
  let podman: Awaited<ReturnType<typeof startPodmanService>>;
  let cp: ControlPlane;
  const image = `${registry}/berth-test/podman-agent-${Date.now()}:v1`;

  before(async () => {
    await pushTestImage(engine.docker!, image, { serveraddress: registry });
    podman = await startPodmanService();
    cp = await startControlPlane({
      listener: true,
      env: {
        BERTH_LISTENER_COMPUTE: "docker",
        BERTH_CONTAINER_ENGINE: podman.address,
        BERTH_DRAIN_TIMEOUT_SECONDS: "2",
      },
    });
  });
  after(async () => {
    await cp?.stop();
    await podman?.stop();
  });

  test("pulls and runs an image with its limits and protections, restarts a killed container, and removes it on DELETE", async () => {
    const created = await createDeployment(cp.admin, {
      name: uniqueName("podman"),
      source: "external_image",
      source_config: { resource_spec: { memory_limit_mb: 256, cpu_limit: 0.5 } },
      source_revision_config: { image_uri: image },
      secrets: [{ name: "GREETING", value: "from podman" }],
    });
    const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);

    const byDeployment = { filters: { label: [`berth.deployment=${created.id}`] } };
    const containers = await podman.docker.listContainers(byDeployment);
    assert.equal(containers.length, 1, "the revision runs on podman");
    const inspected = await podman.docker.getContainer(containers[0]!.Id).inspect();
    assert.equal(inspected.HostConfig.Memory, 256 * 1024 * 1024);
    assert.equal(inspected.HostConfig.NanoCpus, 0.5e9);
    assert.ok(inspected.HostConfig.SecurityOpt?.includes("no-new-privileges"), JSON.stringify(inspected.HostConfig.SecurityOpt));
    assert.equal(inspected.HostConfig.Init, true);
    const published = Object.values(inspected.NetworkSettings.Ports ?? {}).flat();
    assert.ok(published.length > 0 && published.every((binding) => binding?.HostIp === "127.0.0.1"), JSON.stringify(published));
    // The deployment's own network, behind the host firewall's rules for its bridge (when the listener runs as root).
    // (podman reports NetworkMode "bridge" for any bridge network: its networks say which.)
    assert.deepEqual(Object.keys(inspected.NetworkSettings.Networks), [`berth-${created.id}`]);
    const bridge = (
      JSON.parse(spawnSync("podman", ["network", "inspect", `berth-${created.id}`]).stdout.toString()) as {
        network_interface: string;
      }[]
    )[0]!.network_interface;
    const rulesOf = () => spawnSync("iptables", ["-w", "-S"]).stdout?.toString() ?? "";
    if (root) assert.match(rulesOf(), new RegExp(`^-A (DOCKER-USER|FORWARD) -i ${bridge} -j BERTH-F-${bridge}$`, "m"));

    const deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${created.id}`)).body;
    const ask = async () => {
      const response = await fetch(`${deployment.source_config.custom_url}/info`, { headers: { "x-api-key": cp.adminKey } });
      assert.equal(response.status, 200);
      return (await response.json()) as { greeting: string; host: string };
    };
    assert.equal((await ask()).greeting, "from podman");

    // A killed container is restarted, with the reason in the revision's timeline.
    await podman.docker.getContainer(containers[0]!.Id).kill({ signal: "SIGKILL" });
    type Step = { status: string; message: string };
    let timeline: Step[] = [];
    const deadline = Date.now() + 120_000;
    while (!timeline.some((step) => step.message.startsWith("Restarted the agent server")) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      timeline = (await cp.admin.get<{ resources: Step[] }>(`/v2/deployments/${created.id}/revisions/${revision.id}/events`)).body
        .resources;
    }
    const killed = timeline.findIndex((step) => /was killed|exited with code 137/.test(step.message));
    const restarted = timeline.findIndex((step) => step.message.startsWith("Restarted the agent server"));
    assert.ok(killed >= 0 && killed < restarted, JSON.stringify(timeline));
    assert.equal((await ask()).greeting, "from podman");
    assert.equal((await revisionsOf(cp.admin, created.id))[0]!.status, "DEPLOYED");

    assert.equal((await cp.admin.delete(`/v2/deployments/${created.id}`)).status, 204);
    const gone = Date.now() + 60_000;
    let left = await podman.docker.listContainers({ all: true, ...byDeployment });
    while (left.length > 0 && Date.now() < gone) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      left = await podman.docker.listContainers({ all: true, ...byDeployment });
    }
    assert.deepEqual(left, [], "DELETE removes the deployment's containers from podman");
    // The chains go one after the other (the forward chain first): wait for all of them.
    while (rulesOf().includes(`-${bridge}`) && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 250));
    assert.ok(!rulesOf().includes(`-${bridge}`), "and its network's firewall chains");
  });
});
