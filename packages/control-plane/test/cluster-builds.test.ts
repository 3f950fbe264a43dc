// Runs in the SQLite pass only: its subject is cluster builds,
// where the control plane's database plays no part.
// A cluster listener building sources, end to end through processes: `berth control-plane` and `berth listener
// --compute cluster --image-registry …` against the stateful fake of the Kubernetes API (helpers/fake-kubernetes.ts,
// not a live cluster), with the REAL engine and loopback registry of the container tests: the image is built by the
// engine, pushed to the registry (checked through its HTTP API), and its reference applied to the fake.
import type Docker from "dockerode";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { type KubernetesObject, loadAllYaml } from "@kubernetes/client-node";
import {
  type ControlPlane,
  createDeployment,
  type Deployment,
  newDataDir,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";
import { deployTarball, CONTROL_PLANE_FIXTURES, finalRevision, logsOf, packFixture } from "@berth/test-support";
import { containerEngine, imagesLabelled } from "@berth/test-support/container-engine";
import { type FakeKubernetes, type StoredObject, startFakeKubernetes } from "@berth/test-support/kubernetes";
import { startGitHost } from "@berth/test-support/git-host";
import { listenerArgsFor, runListenerCommand, startListenerProcess } from "./helpers/listener-process.js";

const engine = await containerEngine();
const registry = process.env.BERTH_TEST_REGISTRY ?? "";
const skip =
  engine.skip || (!registry && "BERTH_TEST_REGISTRY (a loopback registry, see scripts/container-engine.sh) is not set");
if (!engine.skip && !registry) process.stderr.write(`\n*** SKIPPED: the cluster build tests: ${skip} ***\n\n`);

const NAMESPACE = "built";
/** A path of its own per run: the loopback registry outlives test runs. */
const REGISTRY_PATH = `berth-test/cluster-${Date.now()}`;

type Step = { status: string; message: string };
type Named = { kind?: string; metadata?: { name?: string; labels?: Record<string, string> } };
type PodSpec = { containers: { image?: string; imagePullPolicy?: string; securityContext?: Record<string, unknown> }[] };
const describeObject = (object: Named) => `${object.kind}/${object.metadata?.name}`;

/** The tags the registry's HTTP API lists for a repository (none when it does not know it). */
async function registryTags(repository: string): Promise<string[]> {
  const response = await fetch(`http://${registry}/v2/${repository}/tags/list`);
  if (response.status === 404) return [];
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as { tags?: string[] | null }).tags ?? [];
}

/** The images of the API and queue Deployments in `--render`'s YAML. */
function renderedServerImages(yaml: string): (string | undefined)[] {
  return (loadAllYaml(yaml) as KubernetesObject[])
    .filter((o) => o.kind === "Deployment" && /-(api|queue)$/.test(o.metadata?.name ?? ""))
    .map((o) => (o as { spec: { template: { spec: PodSpec } } }).spec.template.spec.containers[0]!.image);
}

describe("a cluster listener builds internal_source revisions, pushes them to its registry and deploys them", { skip }, () => {
  let fake: FakeKubernetes;
  let cp: ControlPlane;
  let docker: Docker;
  let listener: { child: ChildProcess; output: () => string } | undefined;
  let listenerArgs: string[] = [];
  let deployment: Deployment;
  let pushedRef = "";

  const clusterArgs = () => ["--compute", "cluster", "--kubeconfig", fake.kubeconfigFile, "--cluster-namespace", NAMESPACE];
  const why = () => `\nlistener output:\n${listener?.output().split("\n").slice(-40).join("\n") ?? ""}`;
  const stopListener = async () => {
    if (listener && listener.child.exitCode === null && listener.child.signalCode === null) {
      listener.child.kill("SIGTERM");
      await once(listener.child, "exit");
    }
  };
  /** The objects Berth applied for the deployment (server-side apply by field manager berth). */
  const appliedOf = (deploymentId: string) =>
    fake
      .objects(undefined, NAMESPACE)
      .filter(
        (object) =>
          object.metadata?.labels?.["berth.dev/deployment"] === deploymentId &&
          (object.metadata?.managedFields ?? []).some((field) => field.manager === "berth"),
      );
  const serverImagesOf = (deploymentId: string) =>
    appliedOf(deploymentId)
      .filter(
        (object) =>
          object.kind === "Deployment" && ["api", "queue"].includes(object.metadata?.labels?.["berth.dev/component"] ?? ""),
      )
      .map((object) => (object.spec as { template: { spec: PodSpec } }).template.spec.containers[0]!);
  const timelineOf = async (deploymentId: string, revisionId: string) =>
    (await cp.admin.get<{ resources: Step[] }>(`/v2/deployments/${deploymentId}/revisions/${revisionId}/events`)).body.resources;
  const repository = (deploymentId: string) => `${REGISTRY_PATH}/deployment-${deploymentId}`;

  before(async () => {
    docker = engine.docker!;
    fake = await startFakeKubernetes();
    cp = await startControlPlane({ listener: false });
    const registered = await cp.admin.post<{ id: string }>("/v2/listeners", {
      compute_type: "cluster",
      compute_id: "fake-cluster",
      // Built sources name no listener: they go to the workspace's default one.
      default: true,
    });
    assert.equal(registered.status, 201, JSON.stringify(registered.body));
    listenerArgs = listenerArgsFor(cp, registered.body.id, newDataDir("berth-cluster-builds-"));
  });

  after(async () => {
    await stopListener();
    await cp?.stop();
    await fake?.close();
  });

  test("without --image-registry, an internal_source revision ends DEPLOY_FAILED naming the option", async () => {
    listener = await startListenerProcess([...listenerArgs, ...clusterArgs(), "--router-port", "0"], {
      BERTH_CLUSTER_IMAGE_REGISTRY: undefined,
      KUBECONFIG: undefined,
    });
    const before = fake.requests.length;
    const { deployment: failing, revisionId } = await deployTarball(cp.admin, uniqueName("unpushed"), packFixture("deploy-app"));
    const revision = await finalRevision(cp.admin, failing.id, revisionId);
    assert.equal(revision.status, "DEPLOY_FAILED", `${revision.status_message}${why()}`);
    assert.match(revision.status_message ?? "", /--image-registry HOST\[:PORT\]\/PATH \(BERTH_CLUSTER_IMAGE_REGISTRY/);
    assert.ok(
      fake.requests.slice(before).every((r) => !JSON.stringify(r).includes(failing.id)),
      "nothing of it was sent to the cluster",
    );
    assert.deepEqual(await imagesLabelled(docker, `berth.deployment=${failing.id}`), [], "nothing was built");
    await stopListener();
  });

  test("with --image-registry, the revision is built as on a docker listener, pushed, applied with that image, and DEPLOYED", async () => {
    const secretsFile = join(mkdtempSync(join(tmpdir(), "berth-secrets-")), "secrets.json");
    // The loopback registry takes anonymous pushes: the login is read and sent, and ignored by it.
    writeFileSync(secretsFile, JSON.stringify({ "berth-image-registry": { username: "ci", password: "unused" } }));
    listener = await startListenerProcess(
      [
        ...listenerArgs,
        ...clusterArgs(),
        "--router-port",
        "0",
        "--engine",
        engine.address,
        "--image-registry",
        `${registry}/${REGISTRY_PATH}`,
      ],
      { BERTH_CLUSTER_ROLLOUT_SECONDS: "120", BERTH_LISTENER_SECRETS_FILE: secretsFile, KUBECONFIG: undefined },
    );
    const deployed = await deployTarball(cp.admin, uniqueName("built"), packFixture("deploy-app"), {
      secrets: [{ name: "GREETING", value: "first" }],
    });
    deployment = deployed.deployment;
    const revision = await finalRevision(cp.admin, deployment.id, deployed.revisionId);
    assert.equal(revision.status, "DEPLOYED", `${revision.status_message}${why()}`);
    assert.match(revision.status_message ?? "", new RegExp(`namespace ${NAMESPACE}`));

    // The timeline: the build, then the push of the image under the deployment's repository, tagged by its build key.
    const timeline = await timelineOf(deployment.id, deployed.revisionId);
    const pushed = timeline.find((step) => step.message.startsWith("Pushed "));
    assert.ok(pushed, JSON.stringify(timeline));
    pushedRef = pushed.message.slice("Pushed ".length);
    assert.match(pushedRef, new RegExp(`^${registry}/${REGISTRY_PATH}/deployment-${deployment.id}:[0-9a-f]{32}$`));
    const statuses = timeline.map((step) => step.status);
    assert.ok(statuses.indexOf("BUILDING") >= 0 && statuses.indexOf("BUILDING") < timeline.indexOf(pushed), statuses.join(","));
    const build = (await logsOf(cp.admin, deployment.id, deployed.revisionId, "build")).map((line) => line.message);
    assert.ok(
      build.some((line) => line.startsWith("Dockerfile: FROM berth/agent-runtime:")),
      "the build log shows the Dockerfile, as a docker listener's does",
    );
    assert.ok(build.includes(`Pushed ${pushedRef}`), build.join("\n"));

    // The registry has it; the engine keeps its local build (labelled, removed with the deployment).
    const tag = pushedRef.split(":").at(-1)!;
    assert.deepEqual(await registryTags(repository(deployment.id)), [tag]);
    const local = await imagesLabelled(docker, `berth.deployment=${deployment.id}`);
    assert.equal(local.length, 1);
    assert.equal(revision.image_digest, local[0]!.Id, "the revision records the pushed image's id");

    // The API and queue Deployments run it as Berth's image: pulled once per tag, read-only root.
    const servers = serverImagesOf(deployment.id);
    assert.equal(servers.length, 2, appliedOf(deployment.id).map(describeObject).join(", "));
    for (const container of servers) {
      assert.equal(container.image, pushedRef);
      assert.equal(container.imagePullPolicy, "IfNotPresent");
      assert.equal(container.securityContext?.readOnlyRootFilesystem, true);
    }
  });

  test("a secrets-only PATCH makes a revision that reuses the pushed image: no build, no push", async () => {
    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      secrets: [{ name: "GREETING", value: "second" }],
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const second = patched.body.latest_revision_id!;
    const revision = await finalRevision(cp.admin, deployment.id, second);
    assert.equal(revision.status, "DEPLOYED", `${revision.status_message}${why()}`);
    const build = (await logsOf(cp.admin, deployment.id, second, "build")).map((line) => line.message);
    assert.ok(
      build.some((line) => line.startsWith("Reusing the existing build")),
      build.join("\n"),
    );
    assert.ok(!build.some((line) => line.startsWith("Dockerfile:") || line.startsWith("==> Pushing")), build.join("\n"));
    const timeline = await timelineOf(deployment.id, second);
    assert.ok(!timeline.some((step) => step.status === "BUILDING"), JSON.stringify(timeline));
    assert.ok(timeline.some((step) => step.message === `${pushedRef} is in the registry already: nothing to push`));
    assert.deepEqual(await registryTags(repository(deployment.id)), [pushedRef.split(":").at(-1)]);
    for (const container of serverImagesOf(deployment.id)) assert.equal(container.image, pushedRef);
    const env = appliedOf(deployment.id).find((o) => o.kind === "Secret" && o.metadata?.name?.endsWith("-env")) as StoredObject;
    assert.equal(Buffer.from((env.data as Record<string, string>).GREETING!, "base64").toString("utf8"), "second");
  });

  test("a repo_host deployment is fetched at its branch, built, pushed and deployed; --render names the same image", async () => {
    const host = await startGitHost();
    try {
      const sha = host.createRepository("agent.git", join(CONTROL_PLANE_FIXTURES, "deploy-app"));
      const integration = await cp.admin.post<{ id: string }>("/v1/integrations/repo_host", {
        name: "git",
        kind: "git",
        base_url: host.url,
      });
      const created = await createDeployment(cp.admin, {
        name: uniqueName("built-git"),
        source: "repo_host",
        source_config: { integration_id: integration.body.id, repo_url: `${host.url}/agent.git` },
        source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
        secrets: [],
      });
      const revision = await finalRevision(cp.admin, created.id, created.latest_revision_id!);
      assert.equal(revision.status, "DEPLOYED", `${revision.status_message}${why()}`);
      assert.equal(revision.source_revision_config.repo_commit_sha, sha);
      const timeline = await timelineOf(created.id, revision.id);
      const ref = timeline.find((step) => step.message.startsWith("Pushed "))?.message.slice("Pushed ".length) ?? "";
      assert.match(ref, new RegExp(`/deployment-${created.id}:[0-9a-f]{32}$`), JSON.stringify(timeline));
      assert.deepEqual(await registryTags(repository(created.id)), [ref.split(":").at(-1)]);
      for (const container of serverImagesOf(created.id)) assert.equal(container.image, ref);
      const rendered = await runListenerCommand([
        ...listenerArgs,
        ...clusterArgs(),
        "--image-registry",
        `${registry}/${REGISTRY_PATH}`,
        "--render",
        created.id,
      ]);
      assert.equal(rendered.code, 0, rendered.stderr);
      assert.deepEqual(renderedServerImages(rendered.stdout), [ref, ref]);

      // The branch moves on and is deployed; a redeploy of the first revision runs the first commit's image again.
      host.commit("agent.git", {
        "agent.ts": `${readFileSync(join(CONTROL_PLANE_FIXTURES, "deploy-app", "agent.ts"), "utf8")}\n// newer\n`,
      });
      const rebuilt = await cp.admin.post<{ id: string }>(`/v2/deployments/${created.id}/revisions`);
      assert.equal(rebuilt.status, 201, JSON.stringify(rebuilt.body));
      const newer = await finalRevision(cp.admin, created.id, rebuilt.body.id);
      assert.equal(newer.status, "DEPLOYED", `${newer.status_message}${why()}`);
      assert.notEqual(newer.source_revision_config.repo_commit_sha, sha);
      for (const container of serverImagesOf(created.id)) assert.notEqual(container.image, ref);
      const redeployed = await cp.admin.post<Deployment>(`/v2/deployments/${created.id}/revisions/${revision.id}/redeploy`);
      assert.equal(redeployed.status, 200, JSON.stringify(redeployed.body));
      const rollback = await finalRevision(cp.admin, created.id, redeployed.body.latest_revision_id!);
      assert.equal(rollback.status, "DEPLOYED", `${rollback.status_message}${why()}`);
      assert.equal(rollback.source_revision_config.repo_commit_sha, sha);
      for (const container of serverImagesOf(created.id)) assert.equal(container.image, ref);
      const renderedRollback = await runListenerCommand([
        ...listenerArgs,
        ...clusterArgs(),
        "--image-registry",
        `${registry}/${REGISTRY_PATH}`,
        "--render",
        created.id,
      ]);
      assert.equal(renderedRollback.code, 0, renderedRollback.stderr);
      assert.deepEqual(renderedServerImages(renderedRollback.stdout), [ref, ref]);
      assert.equal((await cp.admin.delete(`/v2/deployments/${created.id}`)).status, 204);
      // Its teardown finishes here, not under the next tests (nor is cut short when the listener stops).
      const left = async () =>
        (await registryTags(repository(created.id))).length +
        (await imagesLabelled(docker, `berth.deployment=${created.id}`)).length;
      const deadline = Date.now() + 60_000;
      while ((await left()) > 0 && Date.now() < deadline) await delay(200);
      assert.equal(await left(), 0, why());
    } finally {
      await host.close();
    }
  });

  test("--render prints the objects with the reference the listener pushes, without building, pushing or calling the cluster", async () => {
    // A kubeconfig of the fake with another token: any request the render made would be recorded with it.
    const renderToken = "render-must-not-call";
    const kubeconfig = join(newDataDir("berth-render-kube-"), "kubeconfig");
    writeFileSync(kubeconfig, readFileSync(fake.kubeconfigFile, "utf8").replace(/token: .*/, `token: ${renderToken}`));
    const pushes = await registryTags(repository(deployment.id));
    const rendered = await runListenerCommand([
      ...listenerArgs,
      ...clusterArgs(),
      "--kubeconfig",
      kubeconfig,
      "--image-registry",
      `${registry}/${REGISTRY_PATH}`,
      "--render",
      deployment.id,
    ]);
    assert.equal(rendered.code, 0, rendered.stderr);
    assert.deepEqual(renderedServerImages(rendered.stdout), [pushedRef, pushedRef]);
    assert.ok(!fake.requests.some((r) => r.authorization === `Bearer ${renderToken}`), "the render sent nothing to the cluster");
    assert.deepEqual(await registryTags(repository(deployment.id)), pushes, "nor pushed anything");

    const unnamed = await runListenerCommand([...listenerArgs, ...clusterArgs(), "--render", deployment.id]);
    assert.equal(unnamed.code, 2);
    assert.match(unnamed.stderr, /--image-registry HOST\[:PORT\]\/PATH \(BERTH_CLUSTER_IMAGE_REGISTRY\)/);
    const wrong = await runListenerCommand([
      ...listenerArgs,
      ...clusterArgs(),
      "--image-registry",
      "Agents",
      "--render",
      deployment.id,
    ]);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /--image-registry \(BERTH_CLUSTER_IMAGE_REGISTRY\) must be HOST\[:PORT\]\/PATH/);
  });

  test("DELETE removes the deployment's objects, its pushed tags and its local build", async () => {
    const deleted = await cp.admin.delete(`/v2/deployments/${deployment.id}`);
    assert.equal(deleted.status, 204);
    const left = async () => [
      ...fake
        .objects(undefined, NAMESPACE)
        .filter((o) => o.metadata?.labels?.["berth.dev/deployment"] === deployment.id)
        .map(describeObject),
      ...(await registryTags(repository(deployment.id))).map((tag) => `tag ${tag}`),
      ...(await imagesLabelled(docker, `berth.deployment=${deployment.id}`)).map((image) => `image ${image.Id}`),
    ];
    const deadline = Date.now() + 60_000;
    while ((await left()).length > 0 && Date.now() < deadline) await delay(200);
    assert.deepEqual(await left(), [], why());
  });
});
