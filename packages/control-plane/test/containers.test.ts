import { Client } from "@langchain/langgraph-sdk";
import type Docker from "dockerode";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ControlPlane, type Deployment, revisionsOf, startControlPlane } from "@berth/test-support";
import { deployTarball, finalRevision, logsOf, packFixture } from "./helpers/deploy.js";
import { containerEngine } from "./helpers/engine.js";

const engine = await containerEngine();

/** The text of the last message of a run's output. */
function lastMessage(values: unknown): string {
  const messages = (values as { messages: { content: string }[] }).messages;
  return messages[messages.length - 1]!.content;
}

describe("a docker listener builds internal_source into an image and runs it as a container", { skip: engine.skip }, () => {
  let cp: ControlPlane;
  let docker: Docker;
  let deployment: Deployment;
  let revisionId: string;

  before(async () => {
    docker = engine.docker!;
    cp = await startControlPlane({
      listener: true,
      env: { BERTH_LISTENER_COMPUTE: "docker", BERTH_CONTAINER_ENGINE: engine.address, BERTH_DRAIN_TIMEOUT_SECONDS: "5" },
    });
    const deployed = await deployTarball(cp.admin, "boxed", packFixture("deploy-app"), {
      secrets: [{ name: "GREETING", value: "boxed" }],
    });
    deployment = deployed.deployment;
    revisionId = deployed.revisionId;
  });
  after(() => cp?.stop());

  const containersOf = async (deploymentId: string) =>
    docker.listContainers({ all: true, filters: { label: [`berth.deployment=${deploymentId}`] } });

  test("the revision is built into an image, deployed, and served through the router with the SDK", async () => {
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const build = (await logsOf(cp.admin, deployment.id, revisionId, "build")).map((line) => line.message);
    assert.ok(
      build.some((line) => line.startsWith("Dockerfile: FROM berth/agent-runtime:")),
      "the build log shows the Dockerfile",
    );
    const current = await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`);
    const client = new Client({ apiUrl: current.body.source_config.custom_url!, apiKey: cp.adminKey });
    const thread = await client.threads.create();
    const output = await client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "from a container" }] },
    });
    assert.equal(lastMessage(output), "boxed: from a container");
    const [running] = await containersOf(deployment.id);
    assert.match(revision.image_digest ?? "", /^sha256:[0-9a-f]{64}$/);
    assert.equal(running?.ImageID, revision.image_digest, "the revision records the image its container runs");
  });

  test("the container runs with an init, no privileges, a read-only root and its port on 127.0.0.1 only", async () => {
    const [info] = await containersOf(deployment.id);
    assert.ok(info, "a container of the deployment runs");
    const inspected = await docker.getContainer(info.Id).inspect();
    assert.equal(inspected.HostConfig.Init, true);
    assert.equal(inspected.HostConfig.ReadonlyRootfs, true);
    assert.deepEqual(inspected.HostConfig.SecurityOpt, ["no-new-privileges"]);
    assert.deepEqual(inspected.HostConfig.CapDrop, ["ALL"]);
    assert.equal(inspected.Config.User, "65534:65534");
    assert.equal(inspected.Config.Labels["berth.revision"], revisionId);
    const bindings = Object.values(inspected.NetworkSettings.Ports).flat();
    assert.ok(bindings.length > 0 && bindings.every((binding) => binding?.HostIp === "127.0.0.1"), JSON.stringify(bindings));
    assert.ok(inspected.Config.Env.includes("GREETING=boxed"), "the deployment's secrets are its environment");
    assert.ok(!inspected.Config.Env.some((entry) => entry.startsWith("BERTH_ADMIN_API_KEY=")), "no control-plane key inside");
  });

  test("a killed container is restarted, with the reason in the revision's timeline and the deploy log", async () => {
    const [before] = await containersOf(deployment.id);
    await docker.getContainer(before!.Id).kill({ signal: "SIGKILL" });
    type Step = { status: string; message: string };
    let timeline: Step[] = [];
    while (!timeline.some((step) => step.message.startsWith("Restarted the agent server"))) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      timeline = (await cp.admin.get<{ resources: Step[] }>(`/v2/deployments/${deployment.id}/revisions/${revisionId}/events`))
        .body.resources;
    }
    const killed = timeline.findIndex((step) => /was killed|exited with code 137/.test(step.message));
    const restarted = timeline.findIndex((step) => step.message.startsWith("Restarted the agent server"));
    assert.ok(killed >= 0 && killed < restarted, JSON.stringify(timeline));
    assert.deepEqual(new Set(timeline.slice(killed).map((step) => step.status)), new Set(["DEPLOYED"]));
    const lines = (await logsOf(cp.admin, deployment.id, revisionId, "deploy")).map((line) => line.message);
    assert.ok(
      lines.some((line) => /was killed|exited with code 137/.test(line)),
      lines.join("\n"),
    );
    const current = await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`);
    const client = new Client({ apiUrl: current.body.source_config.custom_url!, apiKey: cp.adminKey });
    const output = await client.runs.wait(null, "agent", { input: { messages: [{ type: "human", content: "again" }] } });
    assert.equal(lastMessage(output), "boxed: again");
  });

  test("a PATCH under steady load switches containers with zero failed requests; the same source reuses the image", async () => {
    const url = (await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body.source_config.custom_url!;
    const client = new Client({ apiUrl: url, apiKey: cp.adminKey });
    const answers: string[] = [];
    const failures: string[] = [];
    let switched = false;
    // Four clients call the deployment back to back until one is answered by the new revision.
    const load = Array.from({ length: 4 }, async () => {
      while (!switched) {
        try {
          const output = await client.runs.wait(null, "agent", { input: { messages: [{ type: "human", content: "load" }] } });
          answers.push(lastMessage(output));
          if (lastMessage(output).startsWith("second:")) switched = true;
        } catch (error) {
          failures.push((error as Error).message);
          if (failures.length > 20) switched = true;
        }
      }
    });
    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      secrets: [{ name: "GREETING", value: "second" }],
    });
    assert.equal(patched.status, 200);
    const second = patched.body.latest_revision_id!;
    const revision = await finalRevision(cp.admin, deployment.id, second);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    await Promise.all(load);
    assert.deepEqual(failures, []);
    assert.ok(answers.includes("boxed: load") && answers.includes("second: load"), `answers: ${new Set(answers).size} kinds`);
    const build = (await logsOf(cp.admin, deployment.id, second, "build")).map((line) => line.message);
    assert.ok(
      build.some((line) => line.startsWith("Reusing the existing build")),
      build.join("\n"),
    );
    const revisions = await revisionsOf(cp.admin, deployment.id);
    assert.equal(revisions.find((r) => r.id === revisionId)?.status, "DEPLOYED");
  });

  test("DELETE removes the deployment's containers and images", async () => {
    const deleted = await cp.admin.delete(`/v2/deployments/${deployment.id}`);
    assert.equal(deleted.status, 204);
    const left = async () => [
      ...(await containersOf(deployment.id)).map((container) => `container ${container.Names.join(",")}`),
      ...(await docker.listImages({ filters: { label: [`berth.deployment=${deployment.id}`] } })).map(
        (image) => `image ${image.Id}`,
      ),
    ];
    // Bounded: the listener tears down within seconds; a minute means it never will.
    const deadline = Date.now() + 60_000;
    while ((await left()).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(await left(), [], cp.output().split("\n").slice(-30).join("\n"));
  });
});
