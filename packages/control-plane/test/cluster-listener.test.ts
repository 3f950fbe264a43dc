// A cluster listener end to end, black-box through processes: `berth control-plane` (no embedded listener) and
// `berth listener --compute cluster` as separate processes, driven through the public API, against a STATEFUL FAKE
// of the Kubernetes API (helpers/fake-kubernetes.ts: it stores what is applied and simulates the Deployment,
// StatefulSet and garbage-collector controllers). It is NOT a live cluster: none can run where Berth is tested.
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import { type KubernetesObject, loadAllYaml } from "@kubernetes/client-node";
import {
  type ControlPlane,
  createDeployment,
  type Deployment,
  makeTarball,
  newDataDir,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";
import { deployTarball, finalRevision, logsOf } from "@berth/test-support";
import { wireFormOf } from "@berth/test-support/kubernetes";
import { listenerArgsFor, runListenerCommand, startListenerProcess } from "./helpers/listener-process.js";
import { type FakeKubernetes, type StoredObject, startFakeKubernetes } from "@berth/test-support/kubernetes";

const NAMESPACE = "team-a";
/** Where the platform and the ingress run, as the deployments' NetworkPolicy lets requests in from. */
const NETWORK_ENV = { BERTH_CLUSTER_PLATFORM_NAMESPACE: "berth-system", BERTH_CLUSTER_INGRESS_NAMESPACES: "ingress-nginx" };
const GOOD_IMAGE = "registry.example/agent:1";
const BAD_IMAGE = "registry.example/bad:1";
const SECRET_VALUE = "sk-cluster-e2e-1f2e";

/** Polls `check` until it returns a value (not undefined), failing after the deadline with `what`. */
async function eventually<T>(what: string, check: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await delay(100);
  }
}

/** What the assertions read of an object, stored by the fake or parsed from YAML. */
type Named = { kind?: string; metadata?: { name?: string; namespace?: string; labels?: Record<string, string> } };
const labelsOf = (object: Named | undefined) => object?.metadata?.labels ?? {};
const describeObject = (object: Named) => `${object.kind}/${object.metadata?.name}`;
/** The names every object of a deployment derives from its id. */
const baseName = (deploymentId: string) => `berth-${deploymentId.replace(/-/g, "").slice(0, 8)}`;

describe("a cluster listener, against a stateful fake of the Kubernetes API", () => {
  let fake: FakeKubernetes;
  let cp: ControlPlane;
  let listener: { child: ChildProcess; output: () => string } | undefined;
  let listenerId = "";
  let listenerArgs: string[] = [];
  let deployed: Deployment;

  /** Every object the fake holds for the deployment: Berth's and those the controllers made (ReplicaSets, pods, claims). */
  const objectsOf = (deploymentId: string) =>
    fake.objects(undefined, NAMESPACE).filter((object) => labelsOf(object)["berth.dev/deployment"] === deploymentId);
  /** Those Berth applied (the controllers' own carry no field manager). */
  const appliedOf = (deploymentId: string) =>
    objectsOf(deploymentId).filter((object) =>
      (object.metadata?.managedFields ?? []).some((field) => field.manager === "berth" && field.operation === "Apply"),
    );
  const why = () => `\nlistener output:\n${listener?.output() ?? ""}`;

  before(async () => {
    fake = await startFakeKubernetes();
    cp = await startControlPlane({ listener: false });
    const registered = await cp.admin.post<{ id: string; compute_type: string }>("/v2/listeners", {
      compute_type: "cluster",
      compute_id: "fake-cluster",
      compute_config: { cluster_namespaces: [NAMESPACE] },
      // The workspace's default: deployments naming no listener (built sources) land here too.
      default: true,
    });
    assert.equal(registered.status, 201, JSON.stringify(registered.body));
    assert.equal(registered.body.compute_type, "cluster");
    listenerId = registered.body.id;
    listenerArgs = listenerArgsFor(cp, listenerId, newDataDir("berth-cluster-listener-"));
    // A failure must come from the pod's state: a timeout would fail the revision too, with another message.
    listener = await startListenerProcess(
      [
        ...listenerArgs,
        "--compute",
        "cluster",
        "--kubeconfig",
        fake.kubeconfigFile,
        "--cluster-namespace",
        "agents",
        "--router-port",
        "0",
      ],
      { BERTH_CLUSTER_ROLLOUT_SECONDS: "60", BERTH_CLUSTER_LOG_SECONDS: "0.2", KUBECONFIG: undefined, ...NETWORK_ENV },
    );
  });

  after(async () => {
    if (listener && listener.child.exitCode === null && listener.child.signalCode === null) {
      listener.child.kill("SIGTERM");
      await once(listener.child, "exit");
    }
    await cp?.stop();
    await fake?.close();
  });

  test("an external_image deployment rolls out: its objects are server-side applied to its namespace, and it is DEPLOYED at the API Service's URL", async () => {
    deployed = await createDeployment(cp.admin, {
      name: uniqueName("cluster"),
      source: "external_image",
      source_config: {
        listener_id: listenerId,
        listener_config: { cluster_namespace: NAMESPACE },
        resource_spec: { min_scale: 1, max_scale: 3, cpu: 0.5, memory_mb: 512 },
      },
      source_revision_config: { image_uri: GOOD_IMAGE },
      secrets: [{ name: "OPENAI_API_KEY", value: SECRET_VALUE }],
    });
    const revisionId = deployed.latest_revision_id!;
    const revision = await finalRevision(cp.admin, deployed.id, revisionId);
    assert.equal(revision.status, "DEPLOYED", `${revision.status_message}${why()}`);
    assert.match(revision.status_message ?? "", /namespace team-a/);

    const base = baseName(deployed.id);
    const current = await cp.admin.get<Deployment>(`/v2/deployments/${deployed.id}`);
    assert.equal(current.body.source_config.custom_url, `http://${base}-api.${NAMESPACE}.svc:8000`);
    assert.equal(current.body.active_revision_id, revisionId);

    // What Berth applied, in team-a (the deployment's listener_config), not in the listener's own namespace.
    const applied = appliedOf(deployed.id);
    assert.deepEqual(applied.map(describeObject).sort(), [
      `Deployment/${base}-api`,
      `Deployment/${base}-cache`,
      `Deployment/${base}-queue`,
      `HorizontalPodAutoscaler/${base}-api`,
      `HorizontalPodAutoscaler/${base}-queue`,
      `NetworkPolicy/${base}-api`,
      `Secret/${base}-db-credentials`,
      `Secret/${base}-env`,
      `Service/${base}-api`,
      `Service/${base}-cache`,
      `Service/${base}-db`,
      `StatefulSet/${base}-db`,
    ]);
    assert.equal(fake.objects(undefined, "agents").length, 0, "nothing lands in the listener's default namespace");
    for (const object of applied) {
      const labels = labelsOf(object);
      assert.equal(labels["app.kubernetes.io/managed-by"], "berth", describeObject(object));
      assert.equal(labels["app.kubernetes.io/name"], deployed.name, describeObject(object));
      assert.equal(labels["berth.dev/revision"], revisionId, describeObject(object));
      assert.ok(["api", "queue", "db", "cache"].includes(labels["berth.dev/component"] ?? ""), describeObject(object));
    }

    // Every apply was a server-side apply by field manager berth.
    const applies = fake.requests.filter(
      (r) => r.method === "PATCH" && labelsOf(r.body as Named)["berth.dev/deployment"] === deployed.id,
    );
    assert.equal(applies.length, applied.length);
    for (const apply of applies) {
      assert.equal(apply.contentType, "application/apply-patch+yaml", apply.path);
      assert.deepEqual(apply.query, { fieldManager: "berth", force: "true" }, apply.path);
      assert.match(apply.path, /\/namespaces\/team-a\//);
    }
    assert.ok(
      fake.requests.every((r) => !r.path.includes("/namespaces/agents/")),
      "the listener never addressed its default namespace",
    );

    // The env Secret holds the deployment's secret (stored as data, as the API server turns stringData into data).
    const [envSecret] = fake.objects("Secret", NAMESPACE).filter((s) => s.metadata?.name === `${base}-env`);
    const data = envSecret!.data as Record<string, string>;
    assert.equal(Buffer.from(data.OPENAI_API_KEY!, "base64").toString("utf8"), SECRET_VALUE);
    assert.match(Buffer.from(data.DATABASE_URL!, "base64").toString("utf8"), new RegExp(`@${base}-db:5432/`));
    // The platform's run-webhook signing key, the one the deployment's owner reads from the API.
    const signing = await cp.admin.get<{ webhook_secret: string }>(`/v2/deployments/${deployed.id}/webhook-secret`);
    assert.equal(Buffer.from(data.BERTH_WEBHOOK_SECRET!, "base64").toString("utf8"), signing.body.webhook_secret);

    // resource_spec landed: the servers' size (limits default to twice the requests; the workers take the API's),
    // and HPAs from min_scale to max_scale, so the Deployments carry no fixed replica count.
    for (const component of ["api", "queue"]) {
      const server = applied.find((o) => describeObject(o) === `Deployment/${base}-${component}`) as StoredObject;
      const template = (server.spec as { template: { spec: { containers: Record<string, unknown>[] } } }).template;
      assert.equal(template.spec.containers[0]!.image, GOOD_IMAGE);
      assert.deepEqual(template.spec.containers[0]!.resources, {
        requests: { cpu: "500m", memory: "512Mi", "ephemeral-storage": "256Mi" },
        limits: { cpu: "1000m", memory: "1024Mi", "ephemeral-storage": "2048Mi" },
      });
      assert.equal((server.spec as { replicas?: number }).replicas, undefined);
      const hpa = applied.find((o) => describeObject(o) === `HorizontalPodAutoscaler/${base}-${component}`) as StoredObject;
      assert.deepEqual([hpa.spec!.minReplicas, hpa.spec!.maxReplicas], [1, 3]);
      assert.deepEqual(hpa.spec!.scaleTargetRef, { apiVersion: "apps/v1", kind: "Deployment", name: `${base}-${component}` });
    }

    // The deployment's pods take requests from the platform's namespace and each other only, and reach no private range.
    const policy = applied.find((o) => describeObject(o) === `NetworkPolicy/${base}-api`) as StoredObject;
    const policySpec = policy.spec as {
      podSelector: unknown;
      policyTypes: string[];
      ingress: { from: unknown[] }[];
      egress: { to: { ipBlock?: { cidr: string; except: string[] } }[] }[];
    };
    assert.deepEqual(policySpec.podSelector, { matchLabels: { "berth.dev/deployment": deployed.id } });
    assert.deepEqual(policySpec.policyTypes, ["Ingress", "Egress"]);
    // From the platform's namespace and the ingress controller's (BERTH_CLUSTER_PLATFORM_NAMESPACE, _INGRESS_NAMESPACES).
    assert.deepEqual(
      policySpec.ingress[1]!.from,
      ["berth-system", "ingress-nginx"].map((name) => ({
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": name } },
      })),
    );
    const internet = policySpec.egress.at(-1)!.to[0]!.ipBlock!;
    assert.equal(internet.cidr, "0.0.0.0/0");
    assert.ok(
      ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"].every((range) => internet.except.includes(range)),
    );

    // The rollout the listener waited for: the revision's API pod runs.
    const apiPods = objectsOf(deployed.id).filter(
      (o) => o.kind === "Pod" && labelsOf(o)["berth.dev/component"] === "api" && labelsOf(o)["berth.dev/revision"] === revisionId,
    );
    assert.equal(apiPods.length, 1);
    assert.equal(apiPods[0]!.status?.phase, "Running");

    // The pods' output reaches the deployment's deploy log (read from the cluster at an interval).
    const podLine = `[${apiPods[0]!.metadata!.name}/api] api is serving`;
    const deadline = Date.now() + 30_000;
    let lines: string[] = [];
    while (!lines.includes(podLine) && Date.now() < deadline) {
      lines = (await logsOf(cp.admin, deployed.id, revisionId, "deploy")).map((line) => line.message);
      if (!lines.includes(podLine)) await delay(200);
    }
    assert.ok(lines.includes(podLine), `${lines.join("\n")}\n${listener!.output().split("\n").slice(-10).join("\n")}`);
    // Later reads answer the same lines again (sinceTime counts in seconds): after two more, the log is read again.
    const podLogPath = `/api/v1/namespaces/${NAMESPACE}/pods/${apiPods[0]!.metadata!.name}/log`;
    const logReads = () => fake.requests.filter((r) => r.path === podLogPath).length;
    const readsSoFar = logReads();
    while (logReads() < readsSoFar + 3) await delay(100);
    lines = (await logsOf(cp.admin, deployed.id, revisionId, "deploy")).map((line) => line.message);
    assert.equal(lines.filter((line) => line === podLine).length, 1, "a line read twice is shipped once");
  });

  test("a pod that cannot pull its image fails the revision with the pod's reason", async () => {
    fake.failImage(BAD_IMAGE, "ImagePullBackOff", `Back-off pulling image "${BAD_IMAGE}"`);
    const failing = await createDeployment(cp.admin, {
      name: uniqueName("cluster-bad"),
      source: "external_image",
      source_config: { listener_id: listenerId, listener_config: { cluster_namespace: NAMESPACE } },
      source_revision_config: { image_uri: BAD_IMAGE },
      secrets: [],
    });
    const revision = await finalRevision(cp.admin, failing.id, failing.latest_revision_id!);
    assert.equal(revision.status, "DEPLOY_FAILED", `${revision.status_message}${why()}`);
    const message = revision.status_message ?? "";
    assert.match(message, /ImagePullBackOff/);
    assert.ok(message.includes(BAD_IMAGE), message);
    assert.match(message, new RegExp(`pod ${baseName(failing.id)}-(api|queue)-`));
    assert.doesNotMatch(message, /did not finish within/, "detected from the pod, not by timing out");
    const current = await cp.admin.get<Deployment>(`/v2/deployments/${failing.id}`);
    assert.equal(current.body.active_revision_id, null);
  });

  test("--render prints the objects the listener applied, as multi-document YAML, without touching the cluster", async () => {
    // A kubeconfig of the fake with another token: any request the render made would be recorded with it.
    const renderToken = "render-must-not-call";
    const kubeconfig = join(newDataDir("berth-render-kube-"), "kubeconfig");
    writeFileSync(kubeconfig, readFileSync(fake.kubeconfigFile, "utf8").replace(/token: .*/, `token: ${renderToken}`));
    const rendered = await runListenerCommand(
      [
        ...listenerArgs,
        "--compute",
        "cluster",
        "--kubeconfig",
        kubeconfig,
        "--cluster-namespace",
        "agents",
        "--render",
        deployed.id,
      ],
      NETWORK_ENV,
    );
    assert.equal(rendered.code, 0, rendered.stderr);
    assert.match(rendered.stdout, /\n---\n/);
    const objects = loadAllYaml(rendered.stdout) as KubernetesObject[];
    assert.deepEqual(
      objects.map(describeObject).sort(),
      appliedOf(deployed.id).map(describeObject).sort(),
      "the same kinds and names as the fake holds",
    );
    assert.ok(objects.every((o) => o.metadata?.namespace === NAMESPACE));
    assert.ok(
      objects.some((o) => describeObject(o) === `NetworkPolicy/${baseName(deployed.id)}-api`),
      "the NetworkPolicy is rendered",
    );
    // With the listener's data directory, the render is exactly what was applied (the same database passwords).
    const applies = fake.requests.filter(
      (r) => r.method === "PATCH" && labelsOf(r.body as Named)["berth.dev/deployment"] === deployed.id,
    );
    assert.deepEqual(
      objects.map(wireFormOf),
      applies.map((r) => r.body),
    );
    assert.ok(!fake.requests.some((r) => r.authorization === `Bearer ${renderToken}`), "the render sent nothing to the cluster");
  });

  test("an internal_source deployment on a cluster listener without --image-registry fails naming the option", async () => {
    const before = fake.requests.length;
    const { deployment, revisionId } = await deployTarball(cp.admin, uniqueName("cluster-src"), makeTarball());
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "DEPLOY_FAILED", `${revision.status_message}${why()}`);
    assert.match(
      revision.status_message ?? "",
      /deploys internal_source revisions only with a registry the cluster pulls from .*: start it with --image-registry HOST\[:PORT\]\/PATH \(BERTH_CLUSTER_IMAGE_REGISTRY/,
    );
    assert.ok(
      fake.requests.slice(before).every((r) => !JSON.stringify(r).includes(deployment.id)),
      "nothing of it was sent to the cluster",
    );
  });

  test("DELETE removes every object of the deployment from the cluster, and only its", async () => {
    const id = deployed.id;
    assert.ok(
      objectsOf(id).some((o) => o.kind === "PersistentVolumeClaim"),
      "the database's claim exists",
    );
    const others = fake.objects().filter((o) => labelsOf(o)["berth.dev/deployment"] !== id).length;
    assert.ok(others > 0, "the failed deployment's objects are there");
    const deleted = await cp.admin.delete(`/v2/deployments/${id}`);
    assert.equal(deleted.status, 204);
    await eventually("the fake to hold none of the deployment's objects", () =>
      objectsOf(id).length === 0 ? true : undefined,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${objectsOf(id).map(describeObject).join(", ")}${why()}`);
    });
    const deletes = fake.requests.filter((r) => r.method === "DELETE");
    assert.ok(deletes.length > 0);
    for (const request of deletes) assert.equal(request.query.propagationPolicy, "Background", request.path);
    assert.equal(
      fake.objects().filter((o) => labelsOf(o)["berth.dev/deployment"] !== id).length,
      others,
      "the other deployments' objects stay",
    );
  });
});
