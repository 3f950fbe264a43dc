// Runs in the SQLite pass only: its subject is container compute,
// where the control plane's database plays no part.
import { Client } from "@langchain/langgraph-sdk";
import type Docker from "dockerode";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type ControlPlane,
  createDeployment,
  type Deployment,
  revisionsOf,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";
import { deployTarball, CONTROL_PLANE_FIXTURES, finalRevision, logsOf, packFixture } from "@berth/test-support";
import { startGitHost } from "@berth/test-support/git-host";
import { containerEngine, imagesLabelled } from "@berth/test-support/container-engine";

const engine = await containerEngine();
const registry = process.env.BERTH_TEST_REGISTRY ?? "";

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
      env: {
        BERTH_LISTENER_COMPUTE: "docker",
        BERTH_CONTAINER_ENGINE: engine.address,
        BERTH_DRAIN_TIMEOUT_SECONDS: "5",
        // Workers grow and shrink within the test's time (only the scale-out deployment has room to scale).
        BERTH_AUTOSCALE_INTERVAL_SECONDS: "0.5",
        BERTH_AUTOSCALE_SCALE_DOWN_SECONDS: "1",
      },
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
    // Docker reports CapDrop ["ALL"], podman's engine the default capabilities it dropped: the kernel's account is the same.
    const status = readFileSync(`/proc/${inspected.State.Pid}/status`, "utf8");
    assert.match(status, /^CapEff:\s*0+$/m);
    assert.match(status, /^CapBnd:\s*0+$/m);
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

  test("Berth's image as an external image with max_scale 2 runs in scale-out mode: API and worker containers on the deployment's PostgreSQL and Redis, workers grown toward queue_max_scale by the queue, all removed with it", {
    skip: !registry && "BERTH_TEST_REGISTRY is not set",
  }, async () => {
    // The revision image the listener built, pushed to the loopback registry: a user's own Berth image.
    const [running] = await containersOf(deployment.id);
    const image = `${registry}/berth-test/scale-out-${Date.now()}:v1`;
    const [repo, tag] = [image.slice(0, image.lastIndexOf(":")), "v1"];
    await docker.getImage(running!.Image).tag({ repo, tag });
    await new Promise((resolve, reject) =>
      docker
        .getImage(image)
        .push({ authconfig: { serveraddress: registry } })
        .then((stream) =>
          docker.modem.followProgress(stream, (failed, events: { error?: string }[]) =>
            failed || events.some((event) => event.error)
              ? reject(failed ?? new Error(JSON.stringify(events)))
              : resolve(undefined),
          ),
        ),
    );
    const created = await createDeployment(cp.admin, {
      name: uniqueName("scaled"),
      source: "external_image",
      source_config: {
        resource_spec: {
          min_scale: 1,
          max_scale: 2,
          queue_min_scale: 1,
          queue_max_scale: 3,
          db_max_connections: 40,
          cache_memory_mb: 64,
        },
      },
      source_revision_config: { image_uri: image },
      secrets: [{ name: "GREETING", value: "scaled" }],
    });
    const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    assert.match(revision.status_message ?? "", /1 workers, PostgreSQL and Redis/);

    const labelled = (...labels: string[]) =>
      docker.listContainers({ all: true, filters: { label: [`berth.deployment=${created.id}`, ...labels] } });
    const [api] = await labelled("berth.role=api");
    const [worker] = await labelled("berth.role=worker");
    const services = await labelled("berth.managed=scale-out");
    assert.ok(api && worker, "an API and a worker container run");
    assert.deepEqual(services.map((service) => service.Labels["berth.service"]).sort(), ["cache", "db"]);
    const apiInfo = await docker.getContainer(api.Id).inspect();
    const workerInfo = await docker.getContainer(worker.Id).inspect();
    assert.equal(apiInfo.HostConfig.NetworkMode, `berth-${created.id}`);
    assert.ok(apiInfo.Config.Env.includes("BERTH_ROLE=api"));
    assert.ok(workerInfo.Config.Env.includes("BERTH_ROLE=worker"));
    // The platform's run slots, which the autoscaler divides the runs by, not the agent server's default.
    assert.ok(workerInfo.Config.Env.includes("BERTH_WORKERS=10"));
    assert.ok(apiInfo.Config.Env.some((entry) => /^DATABASE_URL=postgres:\/\/berth:[^@]+@db:5432\//.test(entry)));
    const db = services.find((service) => service.Labels["berth.service"] === "db")!;
    const cache = services.find((service) => service.Labels["berth.service"] === "cache")!;
    assert.ok((await docker.getContainer(db.Id).inspect()).Config.Env.includes("POSTGRES_MAX_CONNECTIONS=40"));
    assert.equal((await docker.getContainer(cache.Id).inspect()).HostConfig.Memory, 64 * 1024 * 1024);
    const bindings = Object.values((await docker.getContainer(db.Id).inspect()).NetworkSettings.Ports ?? {}).flat();
    assert.deepEqual(bindings.filter(Boolean), [], "the database publishes no port");

    // An API process executes nothing: the run's answer came from the worker, through the database.
    const url = (await cp.admin.get<Deployment>(`/v2/deployments/${created.id}`)).body.source_config.custom_url!;
    const client = new Client({ apiUrl: url, apiKey: cp.adminKey });
    const thread = await client.threads.create();
    const output = await client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "across processes" }] },
    });
    assert.equal(lastMessage(output), "scaled: across processes");
    const state = await client.threads.getState(thread.thread_id);
    assert.equal(lastMessage(state.values), "scaled: across processes");

    // 21 long runs on their own threads, for workers of 10 slots each: the autoscaler reads the queue from the API's
    // GET /metrics and grows the workers to three.
    const runningWorkers = async () =>
      (await docker.listContainers({ filters: { label: [`berth.deployment=${created.id}`, "berth.role=worker"] } })).length;
    const deployLog = async () =>
      (await logsOf(cp.admin, created.id, revision.id, "deploy")).map((line) => line.message).join("\n");
    const until = async (what: string, predicate: () => Promise<boolean>) => {
      const deadline = Date.now() + 90_000;
      while (!(await predicate())) {
        if (Date.now() > deadline) assert.fail(`${what}: not within 90 s; the deploy log:\n${await deployLog()}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };
    const long = await Promise.all(
      Array.from({ length: 21 }, async () =>
        client.runs.create((await client.threads.create()).thread_id, "slow", {
          input: { steps: 600 },
          // 600 supersteps (2 minutes): above LangGraph's default limit of 25.
          config: { recursion_limit: 1000 },
        }),
      ),
    );
    await until("three workers", async () => (await runningWorkers()) === 3);
    // The log is shipped in batches: polled too.
    const growth = /Scaling from 1 to [23] workers: \d+ runs pending and \d+ running for 1 workers \(10 per worker\)/;
    await until("the growth in the deploy log", async () => growth.test(await deployLog()));
    // The queue empties: one worker at a time goes (SIGTERM), down to queue_min_scale.
    for (const run of long) await client.runs.cancel(run.thread_id, run.run_id);
    await until("back to one worker", async () => (await runningWorkers()) === 1);
    await until("the last step in the deploy log", async () => (await deployLog()).includes("Scaling from 2 to 1 workers"));
    const log = await deployLog();
    const [down1, down2] = [log.indexOf("Scaling from 3 to 2 workers"), log.indexOf("Scaling from 2 to 1 workers")];
    assert.ok(down1 >= 0 && down2 > down1, `one worker at a time:\n${log}`);

    assert.equal((await cp.admin.delete(`/v2/deployments/${created.id}`)).status, 204);
    const left = async () => [
      ...(await labelled()).map((container) => `container ${container.Names.join(",")}`),
      ...(await docker.listVolumes({ filters: { label: [`berth.deployment=${created.id}`] } })).Volumes.map(
        (volume) => `volume ${volume.Name}`,
      ),
      ...(await docker.listNetworks({ filters: { name: [`berth-${created.id}`] } })).map((network) => `network ${network.Name}`),
    ];
    const deadline = Date.now() + 60_000;
    while ((await left()).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(await left(), []);
  });

  test("a repo_host deployment is fetched at its branch and built into an image", async () => {
    const host = await startGitHost();
    try {
      const sha = host.createRepository("agent.git", join(CONTROL_PLANE_FIXTURES, "deploy-app"));
      const integration = await cp.admin.post<{ id: string }>("/v1/integrations/repo_host", {
        name: "git",
        kind: "git",
        base_url: host.url,
      });
      const created = await createDeployment(cp.admin, {
        name: uniqueName("repo-image"),
        source: "repo_host",
        source_config: { integration_id: integration.body.id, repo_url: `${host.url}/agent.git`, deployment_type: "dev" },
        source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
        secrets: [{ name: "GREETING", value: "from git" }],
      });
      const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
      assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
      assert.equal(revision.source_revision_config.repo_commit_sha, sha);
      const [container] = await containersOf(created.id);
      assert.equal(container?.ImageID, revision.image_digest);
      // deployment_type dev sizes the container when resource_spec does not.
      const inspected = await docker.getContainer(container!.Id).inspect();
      assert.equal(inspected.HostConfig.Memory, 1024 * 1024 * 1024);
      const url = (await cp.admin.get<Deployment>(`/v2/deployments/${created.id}`)).body.source_config.custom_url!;
      const output = await new Client({ apiUrl: url, apiKey: cp.adminKey }).runs.wait(null, "agent", {
        input: { messages: [{ type: "human", content: "hi" }] },
      });
      assert.equal(lastMessage(output), "from git: hi");
      assert.equal((await cp.admin.delete(`/v2/deployments/${created.id}`)).status, 204);
    } finally {
      await host.close();
    }
  });

  test("redeploying a repo_host revision of an older commit runs that commit's image, or an image built from it again", async () => {
    const host = await startGitHost();
    const agent = readFileSync(join(CONTROL_PLANE_FIXTURES, "deploy-app", "agent.ts"), "utf8");
    const saying = (greeting: string) => ({
      "agent.ts": agent.replace('process.env.GREETING ?? "hello"', `process.env.GREETING ?? "${greeting}"`),
    });
    try {
      const firstSha = host.createRepository("rollback.git", join(CONTROL_PLANE_FIXTURES, "deploy-app"));
      const integration = await cp.admin.post<{ id: string }>("/v1/integrations/repo_host", {
        name: "rollback",
        kind: "git",
        base_url: host.url,
      });
      const created = await createDeployment(cp.admin, {
        name: uniqueName("repo-rollback"),
        source: "repo_host",
        source_config: { integration_id: integration.body.id, repo_url: `${host.url}/rollback.git`, deployment_type: "dev" },
        source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
        secrets: [],
      });
      const first = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
      assert.equal(first.status, "DEPLOYED", first.status_message ?? undefined);
      const url = (await cp.admin.get<Deployment>(`/v2/deployments/${created.id}`)).body.source_config.custom_url!;
      const ask = async (text: string) =>
        lastMessage(
          await new Client({ apiUrl: url, apiKey: cp.adminKey }).runs.wait(null, "agent", {
            input: { messages: [{ type: "human", content: text }] },
          }),
        );
      host.commit("rollback.git", saying("newer"));
      const rebuilt = await cp.admin.post<{ id: string }>(`/v2/deployments/${created.id}/revisions`);
      assert.equal(rebuilt.status, 201, JSON.stringify(rebuilt.body));
      assert.equal((await finalRevision(cp.admin, created.id, rebuilt.body.id)).status, "DEPLOYED");
      assert.equal(await ask("now"), "newer: now");

      const rollBack = async () => {
        const redeployed = await cp.admin.post<Deployment>(`/v2/deployments/${created.id}/revisions/${first.id}/redeploy`);
        assert.equal(redeployed.status, 200, JSON.stringify(redeployed.body));
        const revision = await finalRevision(cp.admin, created.id, redeployed.body.latest_revision_id!);
        assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
        assert.equal(revision.source_revision_config.repo_commit_sha, firstSha);
        return revision;
      };
      // The first commit's image is still there: it runs again.
      const again = await rollBack();
      assert.equal(again.image_digest, first.image_digest);
      assert.equal(await ask("back"), "hello: back");
      // Gone from the engine (pruned, say): exactly that commit is fetched and built again.
      assert.equal((await cp.admin.post(`/v2/deployments/${created.id}/revisions/${rebuilt.body.id}/redeploy`)).status, 200);
      const newest = (await cp.admin.get<Deployment>(`/v2/deployments/${created.id}`)).body.latest_revision_id!;
      assert.equal((await finalRevision(cp.admin, created.id, newest)).status, "DEPLOYED");
      // The rollback's containers finish their requests and stop; then its image can go.
      const deadline = Date.now() + 60_000;
      while ((await containersOf(created.id)).some((c) => c.ImageID === first.image_digest) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 200));
      await docker.getImage(first.image_digest!).remove({ force: true });
      const rebuiltFirst = await rollBack();
      const build = (await logsOf(cp.admin, created.id, rebuiltFirst.id, "build")).map((line) => line.message);
      assert.ok(
        build.some((line) => line.includes(`Fetching commit ${firstSha}`)),
        build.join("\n"),
      );
      assert.equal(await ask("rebuilt"), "hello: rebuilt");
      assert.equal((await cp.admin.delete(`/v2/deployments/${created.id}`)).status, 204);
    } finally {
      await host.close();
    }
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

  test("a graph that throws at import fails the image build with its error as the reason, and nothing runs it", async () => {
    const broken = await deployTarball(cp.admin, uniqueName("broken"), packFixture("build-broken"));
    const revision = await finalRevision(cp.admin, broken.deployment.id, broken.revisionId);
    assert.equal(revision.status, "BUILD_FAILED", revision.status_message ?? undefined);
    assert.match(revision.status_message ?? "", /A graph failed to load: .*broken on purpose: MY_SETTING is not set/);
    const build = (await logsOf(cp.admin, broken.deployment.id, broken.revisionId, "build")).map((line) => line.message);
    assert.ok(
      build.some((line) => /broken on purpose/.test(line)),
      build.join("\n"),
    );
    assert.deepEqual(await containersOf(broken.deployment.id), []);
  });

  test("DELETE removes the deployment's containers and its own image tags; a retag another container runs stays", async () => {
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const [own] = (await imagesLabelled(docker, `berth.deployment=${deployment.id}`)).flatMap((image) => image.RepoTags ?? []);
    assert.ok(own, "the deployment has a tagged image");
    // The user's copy of the built image, run by a container of the user's own.
    const copy = `berth-test/retag-${deployment.id.slice(0, 8)}:1`;
    const [repo, tag] = copy.split(":");
    await docker.getImage(own).tag({ repo, tag });
    const users = await docker.createContainer({ Image: copy, Cmd: ["node", "-e", "setInterval(() => {}, 1000)"] });
    await users.start();
    try {
      const deleted = await cp.admin.delete(`/v2/deployments/${deployment.id}`);
      assert.equal(deleted.status, 204);
      const ownTags = async () =>
        (await docker.listImages())
          .flatMap((image) => image.RepoTags ?? [])
          .filter((name) => name.startsWith(`berth/deployment-${deployment.id}:`));
      const left = async () => [
        // The user's container carries the image's labels, berth.deployment among them.
        ...(await containersOf(deployment.id))
          .filter((container) => container.Id !== users.id)
          .map((container) => `container ${container.Names.join(",")}`),
        ...(await ownTags()).map((name) => `image ${name}`),
      ];
      // Bounded: the listener tears down within seconds; a minute means it never will.
      const deadline = Date.now() + 60_000;
      while ((await left()).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(await left(), [], cp.output().split("\n").slice(-30).join("\n"));
      assert.doesNotMatch(cp.output(), /tearing a deployment down failed/);
      const copyInfo = await docker.getImage(copy).inspect();
      assert.ok(copyInfo.RepoTags.includes(copy), "the user's retag keeps its tag");
      assert.equal((await users.inspect()).State.Running, true);
    } finally {
      await users.remove({ force: true });
      await docker
        .getImage(copy)
        .remove()
        .catch(() => {});
    }
  });
});
