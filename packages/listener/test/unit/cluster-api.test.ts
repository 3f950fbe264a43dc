// The cluster code (compute/cluster/) against a recorded fake of the Kubernetes API:
// a node:http server answering the exact paths the client calls with bodies shaped
// like a real API server's (discovery lists, typed lists without kind on items,
// Status objects for errors, text/plain logs), recording every request so the tests
// assert what was sent. It was NOT run against a live cluster; the in-cluster
// credentials are checked as configuration only (no TLS API server here).
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import type { KubernetesObject } from "@kubernetes/client-node";
import { applyObjects } from "../../src/compute/cluster/apply-objects.js";
import { type ClusterConnection, connectCluster } from "../../src/compute/cluster/cluster-connection.js";
import { deleteDeploymentObjects } from "../../src/compute/cluster/delete-objects.js";
import { readPodLogs } from "../../src/compute/cluster/pod-logs.js";
import { readRollout, waitForRollout } from "../../src/compute/cluster/rollout-status.js";
import {
  apiResource as resource,
  DISCOVERY,
  notFoundStatus,
  type RecordedRequest,
  recordRequest,
  successStatus,
} from "@berth/test-support/kubernetes";

const NS = "berth-apps";
const DEP = "d1";
const REV = "r2";
const TOKEN = "fake-sa-token-7f3a";

// ---------------------------------------------------------------- the fake API server

interface FakeResponse {
  status?: number;
  body: unknown;
  contentType?: string;
}
type Handler = (request: RecordedRequest) => FakeResponse;

class FakeKubeApi {
  readonly requests: RecordedRequest[] = [];
  private readonly routes = new Map<string, Handler>();
  private server: Server | undefined;
  url = "";

  on(method: string, path: string, handler: Handler | FakeResponse): void {
    this.routes.set(`${method} ${path}`, typeof handler === "function" ? handler : () => handler);
  }

  reset(): void {
    this.requests.length = 0;
    this.routes.clear();
    for (const [path, body] of Object.entries(DISCOVERY)) this.on("GET", path, { body });
    this.on("GET", "/apis/keda.sh/v1alpha1", { status: 404, body: notFound() });
  }

  /** What was sent, discovery left out. */
  calls(): RecordedRequest[] {
    return this.requests.filter(
      (r) => !(r.method === "GET" && Object.hasOwn(DISCOVERY, r.path)) && !r.path.endsWith("keda.sh/v1alpha1"),
    );
  }

  async start(): Promise<void> {
    this.server = createServer(async (req, res) => {
      const recorded = await recordRequest(req);
      this.requests.push(recorded);
      const handler = this.routes.get(`${recorded.method} ${recorded.path}`);
      const answer = handler ? handler(recorded) : { status: 404, body: notFound() };
      const contentType = answer.contentType ?? "application/json";
      res.writeHead(answer.status ?? 200, { "content-type": contentType });
      res.end(typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server?.close(() => resolve()));
  }
}

// ---------------------------------------------------------------- fixtures, as a 1.30 API server answers
// (discovery documents and Status objects are shared with the stateful fake, helpers/fake-kubernetes.ts)

const notFound = (message?: string) => notFoundStatus(message);
const success = (kind: string, name: string) => successStatus({ name, kind, uid: `uid-${name}` });
const list = (kind: string, items: unknown[]) => ({
  kind,
  apiVersion: kind.startsWith("Pod") ? "v1" : "apps/v1",
  metadata: { resourceVersion: "48213" },
  items,
});

function labels(component: string, revision = REV) {
  return {
    "app.kubernetes.io/managed-by": "berth",
    "berth.dev/deployment": DEP,
    "berth.dev/revision": revision,
    "berth.dev/component": component,
  };
}

function deployment(
  component: "api" | "queue",
  status: Record<string, unknown>,
  extra: { generation?: number; conditions?: unknown[] } = {},
) {
  const generation = extra.generation ?? 3;
  return {
    metadata: {
      name: `berth-${DEP}-${component}`,
      namespace: NS,
      uid: `5c0f-${component}`,
      resourceVersion: "48190",
      generation,
      creationTimestamp: "2025-05-01T09:58:12Z",
      labels: labels(component),
      annotations: { "deployment.kubernetes.io/revision": "3" },
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: { "berth.dev/deployment": DEP, "berth.dev/component": component } },
      template: {
        metadata: { labels: labels(component) },
        spec: { containers: [{ name: "server", image: "registry.example/agent:2" }] },
      },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
      progressDeadlineSeconds: 600,
    },
    status: {
      observedGeneration: generation,
      conditions: extra.conditions ?? [
        {
          type: "Progressing",
          status: "True",
          lastUpdateTime: "2025-05-01T10:00:03Z",
          lastTransitionTime: "2025-05-01T09:58:12Z",
          reason: "ReplicaSetUpdated",
          message: `ReplicaSet "berth-${DEP}-${component}-6d5f8b7c9d" is progressing.`,
        },
      ],
      ...status,
    },
  };
}
const READY = { replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 };

function pod(name: string, component: string, status: Record<string, unknown>, revision = REV) {
  return {
    metadata: {
      name,
      generateName: `berth-${DEP}-${component}-6d5f8b7c9d-`,
      namespace: NS,
      uid: `uid-${name}`,
      labels: { ...labels(component, revision), "pod-template-hash": "6d5f8b7c9d" },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: `berth-${DEP}-${component}-6d5f8b7c9d`,
          uid: "rs-1",
          controller: true,
        },
      ],
    },
    spec: {
      containers: [{ name: component === "queue" ? "worker" : "server", image: "registry.example/agent:2" }],
      nodeName: "node-a",
    },
    status: { phase: "Running", conditions: [{ type: "PodScheduled", status: "True" }], ...status },
  };
}
const running = (container: string) => ({
  name: container,
  image: "registry.example/agent:2",
  imageID: "registry.example/agent@sha256:9b1c",
  ready: true,
  started: true,
  restartCount: 0,
  state: { running: { startedAt: "2025-05-01T10:00:01Z" } },
});

// ---------------------------------------------------------------- harness

const fake = new FakeKubeApi();
let dir = "";
let kubeconfig = "";
let connection: ClusterConnection;

before(async () => {
  await fake.start();
  dir = mkdtempSync(join(tmpdir(), "berth-kube-"));
  kubeconfig = join(dir, "kubeconfig");
  // current-context points at nothing listening: only choosing the "fake" context reaches the fake.
  writeFileSync(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: ${fake.url}
    insecure-skip-tls-verify: true
- name: elsewhere
  cluster:
    server: https://127.0.0.1:1
users:
- name: berth
  user:
    token: ${TOKEN}
contexts:
- name: fake
  context: { cluster: fake, user: berth, namespace: ${NS} }
- name: elsewhere
  context: { cluster: elsewhere, user: berth }
current-context: elsewhere
`,
  );
  // A kubeconfig named explicitly wins over the pod's credentials.
  process.env.KUBERNETES_SERVICE_HOST = "10.96.0.1";
  process.env.KUBERNETES_SERVICE_PORT = "443";
  delete process.env.KUBECONFIG;
});
after(async () => {
  await fake.stop();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  fake.reset();
  // A fresh client each test: KubernetesObjectApi caches discovery, and each test installs its own API groups.
  connection = connectCluster({ kubeconfig, context: "fake" });
});

// ---------------------------------------------------------------- tests

describe("connectCluster", () => {
  test("a kubeconfig path wins over in-cluster credentials; the context is chosen and the token sent", async () => {
    assert.equal(connection.source, "kubeconfig");
    assert.equal(connection.kubeConfig.getCurrentCluster()?.server, fake.url);
    fake.on("GET", `/api/v1/namespaces/${NS}/pods`, { body: list("PodList", []) });
    await readPodLogs(connection, NS, DEP, {});
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.authorization, `Bearer ${TOKEN}`);
  });

  test("an unknown context is refused with the known ones", () => {
    assert.throws(() => connectCluster({ kubeconfig, context: "prod" }), /no context "prod" \(it has: fake, elsewhere\)/);
  });

  test("in a pod without a kubeconfig, the service account (configuration only: not exercised against a server)", () => {
    const root = join(dir, "pod");
    const saDir = join(root, "var/run/secrets/kubernetes.io/serviceaccount");
    mkdirSync(saDir, { recursive: true });
    writeFileSync(join(saDir, "token"), "in-cluster-token");
    writeFileSync(join(saDir, "namespace"), "tenant-a");
    const inCluster = connectCluster({ inClusterPathPrefix: root });
    assert.equal(inCluster.source, "in-cluster");
    assert.equal(inCluster.kubeConfig.getCurrentCluster()?.server, "https://10.96.0.1:443");
    assert.equal(inCluster.kubeConfig.getCurrentCluster()?.caFile, join(saDir, "ca.crt"));
    assert.equal(inCluster.kubeConfig.getContextObject(inCluster.kubeConfig.getCurrentContext())?.namespace, "tenant-a");
  });
});

const objectsToApply: KubernetesObject[] = [
  { apiVersion: "v1", kind: "Secret", metadata: { name: `berth-${DEP}-env`, namespace: NS, labels: labels("api") } },
  { apiVersion: "v1", kind: "Service", metadata: { name: `berth-${DEP}-api`, namespace: NS, labels: labels("api") } },
  { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: `berth-${DEP}-api`, namespace: NS, labels: labels("api") } },
  { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: `berth-${DEP}-queue`, namespace: NS, labels: labels("queue") } },
];
// The bodies the client sends carry fields too: a typed object keeps them through its serializer.
(objectsToApply[0] as KubernetesObject & { stringData: unknown }).stringData = { OPENAI_API_KEY: "sk-test" };
(objectsToApply[2] as KubernetesObject & { spec: unknown }).spec = deployment("api", {}).spec;

describe("applyObjects", () => {
  test("server-side applies each object in order, then deletes the deployment's stale objects only", async () => {
    const echo: (r: RecordedRequest) => FakeResponse = (r) => {
      const body = r.body as KubernetesObject;
      return { body: { ...body, metadata: { ...body.metadata, uid: "u-1", resourceVersion: "48300" } } };
    };
    for (const o of objectsToApply) {
      const plural = `${o.kind!.toLowerCase()}s`;
      const base = o.apiVersion === "v1" ? "/api/v1" : `/apis/${o.apiVersion}`;
      fake.on("PATCH", `${base}/namespaces/${NS}/${plural}/${o.metadata!.name}`, echo);
    }
    const hpa = (name: string, extra: Record<string, unknown> = {}) => ({
      metadata: { name, namespace: NS, labels: labels("api"), ...extra },
    });
    fake.on("GET", `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`, {
      body: {
        kind: "HorizontalPodAutoscalerList",
        apiVersion: "autoscaling/v2",
        metadata: {},
        items: [
          hpa(`berth-${DEP}-api`),
          // Made by a controller from one of Berth's objects: not Berth's to delete.
          hpa(`keda-hpa-berth-${DEP}-queue`, {
            ownerReferences: [{ apiVersion: "keda.sh/v1alpha1", kind: "ScaledObject", name: "x", uid: "k" }],
          }),
        ],
      },
    });
    fake.on("GET", `/apis/apps/v1/namespaces/${NS}/deployments`, {
      body: list("DeploymentList", [deployment("api", READY), deployment("queue", READY)]),
    });
    for (const path of [`/apis/apps/v1/namespaces/${NS}/statefulsets`])
      fake.on("GET", path, { body: list("StatefulSetList", []) });
    fake.on("GET", `/apis/networking.k8s.io/v1/namespaces/${NS}/networkpolicies`, {
      body: { kind: "NetworkPolicyList", apiVersion: "networking.k8s.io/v1", metadata: {}, items: [] },
    });
    for (const kind of ["services", "secrets"]) {
      fake.on("GET", `/api/v1/namespaces/${NS}/${kind}`, { body: { kind: "List", apiVersion: "v1", metadata: {}, items: [] } });
    }
    fake.on("DELETE", `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers/berth-${DEP}-api`, {
      body: success("horizontalpodautoscalers", `berth-${DEP}-api`),
    });

    await applyObjects(connection, objectsToApply, { fieldManager: "berth" });

    const calls = fake.calls();
    const patches = calls.filter((r) => r.method === "PATCH");
    assert.deepEqual(
      patches.map((r) => r.path),
      [
        `/api/v1/namespaces/${NS}/secrets/berth-${DEP}-env`,
        `/api/v1/namespaces/${NS}/services/berth-${DEP}-api`,
        `/apis/apps/v1/namespaces/${NS}/deployments/berth-${DEP}-api`,
        `/apis/apps/v1/namespaces/${NS}/deployments/berth-${DEP}-queue`,
      ],
    );
    for (const [i, patch] of patches.entries()) {
      assert.equal(patch.contentType, "application/apply-patch+yaml");
      assert.deepEqual(patch.query, { fieldManager: "berth", force: "true" });
      assert.equal(patch.authorization, `Bearer ${TOKEN}`);
      assert.deepEqual(patch.body, objectsToApply[i]);
    }
    const lists = calls.filter((r) => r.method === "GET");
    assert.ok(lists.length >= 5);
    for (const l of lists) assert.equal(l.query.labelSelector, `app.kubernetes.io/managed-by=berth,berth.dev/deployment=${DEP}`);
    const deletes = calls.filter((r) => r.method === "DELETE");
    assert.deepEqual(
      deletes.map((r) => [r.path, r.query.propagationPolicy]),
      [[`/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers/berth-${DEP}-api`, "Background"]],
    );
    // Discovery is asked once per group version, not per object.
    assert.equal(fake.requests.filter((r) => r.path === "/apis/apps/v1").length, 1);
    assert.ok(calls.indexOf(deletes[0]!) > calls.indexOf(patches.at(-1)!), "garbage is collected after the apply");
  });

  test("with KEDA installed, a ScaledObject is applied whole and a stale one collected", async () => {
    fake.on("GET", "/apis/keda.sh/v1alpha1", {
      body: {
        kind: "APIResourceList",
        apiVersion: "v1",
        groupVersion: "keda.sh/v1alpha1",
        resources: [
          resource("scaledobjects", "ScaledObject", { shortNames: ["so"] }),
          resource("scaledobjects/status", "ScaledObject"),
        ],
      },
    });
    const scaledObject = {
      apiVersion: "keda.sh/v1alpha1",
      kind: "ScaledObject",
      metadata: { name: `berth-${DEP}-queue`, namespace: NS, labels: labels("queue") },
      spec: {
        scaleTargetRef: { name: `berth-${DEP}-queue` },
        minReplicaCount: 0,
        maxReplicaCount: 10,
        triggers: [
          { type: "postgresql", metadata: { query: "SELECT count(*) FROM run WHERE status = 'pending'", targetQueryValue: "5" } },
        ],
      },
    };
    const path = `/apis/keda.sh/v1alpha1/namespaces/${NS}/scaledobjects`;
    fake.on("PATCH", `${path}/berth-${DEP}-queue`, (r) => ({ body: r.body }));
    fake.on("GET", path, {
      body: {
        kind: "ScaledObjectList",
        apiVersion: "keda.sh/v1alpha1",
        metadata: {},
        items: [{ ...scaledObject }, { ...scaledObject, metadata: { ...scaledObject.metadata, name: `berth-${DEP}-api` } }],
      },
    });
    fake.on("DELETE", `${path}/berth-${DEP}-api`, { body: success("scaledobjects", `berth-${DEP}-api`) });
    for (const p of [
      "/apis/autoscaling/v2/namespaces/berth-apps/horizontalpodautoscalers",
      "/apis/apps/v1/namespaces/berth-apps/deployments",
      "/apis/apps/v1/namespaces/berth-apps/statefulsets",
      "/apis/networking.k8s.io/v1/namespaces/berth-apps/networkpolicies",
      "/api/v1/namespaces/berth-apps/services",
      "/api/v1/namespaces/berth-apps/secrets",
    ]) {
      fake.on("GET", p, { body: { kind: "List", apiVersion: "v1", metadata: {}, items: [] } });
    }

    await applyObjects(connection, [scaledObject]);

    const calls = fake.calls();
    assert.deepEqual(calls.find((r) => r.method === "PATCH")?.body, scaledObject);
    assert.deepEqual(
      calls.filter((r) => r.method === "DELETE").map((r) => r.path),
      [`${path}/berth-${DEP}-api`],
    );
  });

  test("the API server's refusal is the error, named after the object", async () => {
    fake.on("PATCH", `/api/v1/namespaces/${NS}/secrets/berth-${DEP}-env`, {
      status: 422,
      body: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `Secret "berth-${DEP}-env" is invalid: data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters`,
        reason: "Invalid",
        code: 422,
      },
    });
    await assert.rejects(
      applyObjects(connection, objectsToApply),
      /Could not apply Secret\/berth-d1-env in berth-apps: Secret "berth-d1-env" is invalid/,
    );
    assert.equal(fake.calls().length, 1);
  });

  test("objects without a namespace or of several deployments are refused before anything is sent", async () => {
    const noNamespace = [{ apiVersion: "v1", kind: "Secret", metadata: { name: "x", labels: labels("api") } }];
    await assert.rejects(applyObjects(connection, noNamespace), /without apiVersion, kind, name and namespace/);
    const other = {
      ...objectsToApply[1]!,
      metadata: { ...objectsToApply[1]!.metadata, labels: { "berth.dev/deployment": "d9" } },
    };
    await assert.rejects(applyObjects(connection, [objectsToApply[0]!, other]), /several deployments: d1, d9/);
    assert.equal(fake.requests.length, 0);
  });
});

describe("readRollout", () => {
  function cluster(deployments: unknown[], pods: unknown[]) {
    fake.on("GET", `/apis/apps/v1/namespaces/${NS}/deployments`, { body: list("DeploymentList", deployments) });
    fake.on("GET", `/api/v1/namespaces/${NS}/pods`, { body: list("PodList", pods) });
  }
  const readyPods = [
    pod(`berth-${DEP}-api-6d5f8b7c9d-x2k4p`, "api", { containerStatuses: [running("server")] }),
    pod(`berth-${DEP}-queue-6d5f8b7c9d-q8r2m`, "queue", { containerStatuses: [running("worker")] }),
  ];

  test("progressing while new pods are not all available; the queries select the deployment", async () => {
    cluster(
      [
        deployment("api", { replicas: 3, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1 }),
        deployment("queue", READY),
      ],
      readyPods,
    );
    const status = await readRollout(connection, NS, DEP, REV);
    assert.equal(status.state, "progressing");
    assert.match(status.reason, /berth-d1-api/);
    const [deployments, pods] = [
      fake.calls().find((r) => r.path.endsWith("/deployments")),
      fake.calls().find((r) => r.path.endsWith("/pods")),
    ];
    assert.equal(
      deployments?.query.labelSelector,
      `app.kubernetes.io/managed-by=berth,berth.dev/deployment=${DEP},berth.dev/component in (api,queue)`,
    );
    assert.equal(pods?.query.labelSelector, `berth.dev/deployment=${DEP}`);
  });

  test("progressing until the controller has seen the new generation", async () => {
    const stale = deployment("api", READY);
    stale.metadata.generation = 4;
    cluster([stale], readyPods);
    assert.deepEqual(await readRollout(connection, NS, DEP, REV), {
      state: "progressing",
      reason: "Waiting for Kubernetes to start rolling out Deployment berth-d1-api.",
    });
  });

  test("progressing while a pod of the previous revision is still terminating", async () => {
    const old = pod(`berth-${DEP}-api-58c9d4f7b-zz9tq`, "api", { containerStatuses: [running("server")] }, "r1");
    (old.metadata as Record<string, unknown>).deletionTimestamp = "2025-05-01T10:00:30Z";
    cluster([deployment("api", READY), deployment("queue", READY)], [...readyPods, old]);
    const status = await readRollout(connection, NS, DEP, REV);
    assert.equal(status.state, "progressing");
    assert.match(status.reason, /earlier revisions to stop: berth-d1-api-58c9d4f7b-zz9tq/);
  });

  test("ready when both Deployments run only the revision's available pods", async () => {
    cluster([deployment("api", READY), deployment("queue", READY)], readyPods);
    const status = await readRollout(connection, NS, DEP, REV);
    assert.equal(status.state, "ready", status.reason);
  });

  test("failed: image pull back-off, naming the pod, the container and the kubelet's message", async () => {
    const stuck = pod(`berth-${DEP}-api-6d5f8b7c9d-h7j2n`, "api", {
      phase: "Pending",
      containerStatuses: [
        {
          name: "server",
          image: "registry.example/agent:2",
          imageID: "",
          ready: false,
          started: false,
          restartCount: 0,
          state: { waiting: { reason: "ImagePullBackOff", message: 'Back-off pulling image "registry.example/agent:2"' } },
        },
      ],
    });
    cluster([deployment("api", { replicas: 2, updatedReplicas: 1, availableReplicas: 1 })], [stuck]);
    assert.deepEqual(await readRollout(connection, NS, DEP, REV), {
      state: "failed",
      reason: `Container "server" of pod berth-d1-api-6d5f8b7c9d-h7j2n cannot pull its image (ImagePullBackOff): Back-off pulling image "registry.example/agent:2"`,
    });
  });

  test("failed: crash loop, with the last exit code and termination message", async () => {
    const crashing = pod(`berth-${DEP}-queue-6d5f8b7c9d-c4v8b`, "queue", {
      containerStatuses: [
        {
          ...running("worker"),
          ready: false,
          started: false,
          restartCount: 5,
          state: {
            waiting: { reason: "CrashLoopBackOff", message: "back-off 2m40s restarting failed container=worker pod=..." },
          },
          lastState: {
            terminated: {
              exitCode: 1,
              reason: "Error",
              message: "Error: REDIS_URL is not set\n",
              startedAt: "2025-05-01T10:02:00Z",
              finishedAt: "2025-05-01T10:02:01Z",
              containerID: "containerd://4f1e",
            },
          },
        },
      ],
    });
    cluster([deployment("queue", { replicas: 2, updatedReplicas: 1 })], [crashing]);
    assert.deepEqual(await readRollout(connection, NS, DEP, REV), {
      state: "failed",
      reason:
        'Container "worker" of pod berth-d1-queue-6d5f8b7c9d-c4v8b keeps crashing (CrashLoopBackOff, restarted 5 times); it last exited with code 1 (Error): Error: REDIS_URL is not set',
    });
  });

  test("failed: unschedulable, with the scheduler's message", async () => {
    const pending = pod(`berth-${DEP}-api-6d5f8b7c9d-p0p0p`, "api", {
      phase: "Pending",
      conditions: [
        {
          type: "PodScheduled",
          status: "False",
          lastProbeTime: null,
          lastTransitionTime: "2025-05-01T10:00:00Z",
          reason: "Unschedulable",
          message:
            "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
        },
      ],
    });
    cluster([deployment("api", { replicas: 2, updatedReplicas: 1 })], [pending]);
    const status = await readRollout(connection, NS, DEP, REV);
    assert.equal(status.state, "failed");
    assert.match(
      status.reason,
      /^Pod berth-d1-api-6d5f8b7c9d-p0p0p cannot be scheduled on any node: 0\/3 nodes are available: 3 Insufficient memory/,
    );
  });

  test("failed: a database pod (which has no revision label) that cannot start fails the revision too", async () => {
    const db = pod(`berth-${DEP}-db-0`, "db", {
      phase: "Pending",
      conditions: [
        {
          type: "PodScheduled",
          status: "False",
          reason: "Unschedulable",
          message: "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
        },
      ],
    });
    delete (db.metadata.labels as Record<string, string>)["berth.dev/revision"];
    cluster([deployment("api", { replicas: 2, updatedReplicas: 2 })], [...readyPods, db]);
    assert.deepEqual(await readRollout(connection, NS, DEP, REV), {
      state: "failed",
      reason:
        "Pod berth-d1-db-0 cannot be scheduled on any node: 0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
    });
  });

  test("failed: the Deployment passed its progress deadline", async () => {
    const stalled = deployment(
      "api",
      { replicas: 3, updatedReplicas: 1, availableReplicas: 2 },
      {
        conditions: [
          {
            type: "Progressing",
            status: "False",
            reason: "ProgressDeadlineExceeded",
            message: `ReplicaSet "berth-${DEP}-api-6d5f8b7c9d" has timed out progressing.`,
          },
        ],
      },
    );
    cluster([stalled], readyPods.slice(0, 1));
    assert.deepEqual(await readRollout(connection, NS, DEP, REV), {
      state: "failed",
      reason:
        'Deployment berth-d1-api made no progress within its deadline: ReplicaSet "berth-d1-api-6d5f8b7c9d" has timed out progressing.',
    });
  });

  test("waitForRollout gives up after its timeout with what it was waiting for", async () => {
    cluster([deployment("api", { replicas: 2, updatedReplicas: 2, availableReplicas: 1 })], readyPods.slice(0, 1));
    const started = Date.now();
    const status = await waitForRollout(connection, NS, DEP, REV, { timeoutMs: 300, pollMs: 50 });
    assert.ok(Date.now() - started >= 300);
    assert.equal(status.state, "failed");
    assert.equal(
      status.reason,
      "The rollout did not finish within 300 ms; last: Deployment berth-d1-api: 1 of 2 new pod(s) available.",
    );
    assert.ok(fake.calls().filter((r) => r.path.endsWith("/deployments")).length >= 3, "it polled");
  });

  test("waitForRollout does not wait out a refusal", async () => {
    const forbidden = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `deployments.apps is forbidden: User "system:serviceaccount:berth:listener" cannot list resource "deployments" in API group "apps" in the namespace "${NS}"`,
      reason: "Forbidden",
      details: { group: "apps", kind: "deployments" },
      code: 403,
    };
    fake.on("GET", `/apis/apps/v1/namespaces/${NS}/deployments`, { status: 403, body: forbidden });
    fake.on("GET", `/api/v1/namespaces/${NS}/pods`, { body: list("PodList", []) });
    await assert.rejects(
      waitForRollout(connection, NS, DEP, REV, { timeoutMs: 5000, pollMs: 50 }),
      (error: { code?: number }) => error.code === 403,
    );
  });

  test("waitForRollout returns as soon as the rollout is ready, and stops when aborted", async () => {
    cluster([deployment("api", READY)], readyPods.slice(0, 1));
    assert.equal((await waitForRollout(connection, NS, DEP, REV, { timeoutMs: 5000, pollMs: 50 })).state, "ready");
    cluster([deployment("api", { replicas: 2 })], []);
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error("deploy cancelled")), 100);
    await assert.rejects(
      waitForRollout(connection, NS, DEP, REV, { timeoutMs: 5000, pollMs: 30, signal: abort.signal }),
      /deploy cancelled/,
    );
  });
});

describe("deleteDeploymentObjects", () => {
  test("deletes every labelled kind and the StatefulSet's volumes, tolerating KEDA's absence and 404s", async () => {
    const meta = (name: string, component: string) => ({ name, namespace: NS, labels: labels(component) });
    const lists: Record<string, unknown> = {
      "/apis/autoscaling/v2/namespaces/berth-apps/horizontalpodautoscalers": {
        kind: "HorizontalPodAutoscalerList",
        apiVersion: "autoscaling/v2",
        metadata: {},
        items: [{ metadata: meta("berth-d1-api", "api") }],
      },
      "/apis/apps/v1/namespaces/berth-apps/deployments": list("DeploymentList", [
        deployment("api", READY),
        deployment("queue", READY),
      ]),
      "/apis/apps/v1/namespaces/berth-apps/statefulsets": list("StatefulSetList", [
        {
          metadata: meta("berth-d1-db", "db"),
          spec: {
            serviceName: "berth-d1-db",
            volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"] } }],
          },
        },
      ]),
      "/apis/networking.k8s.io/v1/namespaces/berth-apps/networkpolicies": {
        kind: "NetworkPolicyList",
        apiVersion: "networking.k8s.io/v1",
        metadata: {},
        items: [{ metadata: meta("berth-d1-api", "api") }],
      },
      "/api/v1/namespaces/berth-apps/services": {
        kind: "ServiceList",
        apiVersion: "v1",
        metadata: {},
        items: [{ metadata: meta("berth-d1-api", "api") }],
      },
      "/api/v1/namespaces/berth-apps/secrets": {
        kind: "SecretList",
        apiVersion: "v1",
        metadata: {},
        items: [{ metadata: meta("berth-d1-env", "api"), type: "Opaque" }],
      },
      "/api/v1/namespaces/berth-apps/persistentvolumeclaims": {
        kind: "PersistentVolumeClaimList",
        apiVersion: "v1",
        metadata: {},
        items: [
          { metadata: { name: "data-berth-d1-db-0", namespace: NS, labels: { "berth.dev/component": "db" } } },
          { metadata: { name: "data-berth-d1-db-backup", namespace: NS } },
          { metadata: { name: "data-other-app-0", namespace: NS } },
          { metadata: { name: "berth-d1-cache", namespace: NS, labels: labels("cache") } },
        ],
      },
    };
    for (const [path, body] of Object.entries(lists)) fake.on("GET", path, { body });
    const gone = new Set(["/apis/apps/v1/namespaces/berth-apps/deployments/berth-d1-queue"]);
    const deleteHandler = (r: RecordedRequest): FakeResponse =>
      gone.has(r.path)
        ? { status: 404, body: notFound(`deployments.apps "berth-d1-queue" not found`) }
        : { body: success("x", r.path.split("/").at(-1)!) };
    const deletable = [
      "/apis/autoscaling/v2/namespaces/berth-apps/horizontalpodautoscalers/berth-d1-api",
      "/apis/apps/v1/namespaces/berth-apps/deployments/berth-d1-api",
      "/apis/apps/v1/namespaces/berth-apps/deployments/berth-d1-queue",
      "/apis/apps/v1/namespaces/berth-apps/statefulsets/berth-d1-db",
      "/apis/networking.k8s.io/v1/namespaces/berth-apps/networkpolicies/berth-d1-api",
      "/api/v1/namespaces/berth-apps/services/berth-d1-api",
      "/api/v1/namespaces/berth-apps/secrets/berth-d1-env",
      "/api/v1/namespaces/berth-apps/persistentvolumeclaims/data-berth-d1-db-0",
      "/api/v1/namespaces/berth-apps/persistentvolumeclaims/berth-d1-cache",
    ];
    for (const path of deletable) fake.on("DELETE", path, deleteHandler);

    const deleted = await deleteDeploymentObjects(connection, NS, DEP);

    const deletes = fake.calls().filter((r) => r.method === "DELETE");
    assert.deepEqual(
      deletes.map((r) => r.path),
      deletable,
    );
    for (const d of deletes) assert.equal(d.query.propagationPolicy, "Background");
    assert.deepEqual(deleted, [
      "HorizontalPodAutoscaler/berth-d1-api",
      "Deployment/berth-d1-api",
      "StatefulSet/berth-d1-db",
      "NetworkPolicy/berth-d1-api",
      "Service/berth-d1-api",
      "Secret/berth-d1-env",
      "PersistentVolumeClaim/data-berth-d1-db-0",
      "PersistentVolumeClaim/berth-d1-cache",
    ]);
    assert.ok(
      fake.requests.some((r) => r.path === "/apis/keda.sh/v1alpha1"),
      "KEDA was looked for",
    );
  });

  test("a second delete finds nothing and sends no deletes", async () => {
    for (const path of [
      "/apis/autoscaling/v2/namespaces/berth-apps/horizontalpodautoscalers",
      "/apis/apps/v1/namespaces/berth-apps/deployments",
      "/apis/apps/v1/namespaces/berth-apps/statefulsets",
      "/apis/networking.k8s.io/v1/namespaces/berth-apps/networkpolicies",
      "/api/v1/namespaces/berth-apps/services",
      "/api/v1/namespaces/berth-apps/secrets",
      "/api/v1/namespaces/berth-apps/persistentvolumeclaims",
    ]) {
      fake.on("GET", path, { body: { kind: "List", apiVersion: "v1", metadata: {}, items: [] } });
    }
    assert.deepEqual(await deleteDeploymentObjects(connection, NS, DEP), []);
    assert.equal(fake.calls().filter((r) => r.method === "DELETE").length, 0);
  });
});

describe("readPodLogs", () => {
  test("every container of every pod, prefixed and merged in time order; a container not started yet is skipped", async () => {
    const api = pod(`berth-${DEP}-api-6d5f8b7c9d-x2k4p`, "api", {});
    const queue = pod(`berth-${DEP}-queue-6d5f8b7c9d-q8r2m`, "queue", {});
    (queue.spec as Record<string, unknown>).initContainers = [{ name: "migrate", image: "registry.example/agent:2" }];
    const starting = pod(`berth-${DEP}-api-6d5f8b7c9d-n3w9z`, "api", {});
    fake.on("GET", `/api/v1/namespaces/${NS}/pods`, { body: list("PodList", [api, queue, starting]) });
    const text = (lines: string[]) => ({ body: lines.map((l) => `${l}\n`).join(""), contentType: "text/plain" });
    fake.on(
      "GET",
      `/api/v1/namespaces/${NS}/pods/${api.metadata.name}/log`,
      text([
        "2025-05-01T10:00:01.000000000Z Agent server listening on 0.0.0.0:8000",
        "2025-05-01T10:00:05.250000000Z POST /threads 200",
      ]),
    );
    fake.on("GET", `/api/v1/namespaces/${NS}/pods/${queue.metadata.name}/log`, (r) =>
      r.query.container === "migrate"
        ? text(["2025-05-01T10:00:00.5Z Applied 3 migrations"])
        : text(["2025-05-01T10:00:02.000000001Z Worker polling for runs"]),
    );
    fake.on("GET", `/api/v1/namespaces/${NS}/pods/${starting.metadata.name}/log`, {
      status: 400,
      body: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `container "server" in pod "${starting.metadata.name}" is waiting to start: ContainerCreating`,
        reason: "BadRequest",
        code: 400,
      },
    });

    const lines = await readPodLogs(connection, NS, DEP, { sinceTime: "2025-05-01T09:59:00Z", tailLines: 100 });

    assert.deepEqual(lines, [
      "2025-05-01T10:00:00.5Z [berth-d1-queue-6d5f8b7c9d-q8r2m/migrate] Applied 3 migrations",
      "2025-05-01T10:00:01.000000000Z [berth-d1-api-6d5f8b7c9d-x2k4p/server] Agent server listening on 0.0.0.0:8000",
      "2025-05-01T10:00:02.000000001Z [berth-d1-queue-6d5f8b7c9d-q8r2m/worker] Worker polling for runs",
      "2025-05-01T10:00:05.250000000Z [berth-d1-api-6d5f8b7c9d-x2k4p/server] POST /threads 200",
    ]);
    const logReads = fake.calls().filter((r) => r.path.endsWith("/log"));
    assert.equal(logReads.length, 4);
    for (const read of logReads) {
      assert.equal(read.query.timestamps, "true");
      assert.equal(read.query.tailLines, "100");
      assert.equal(read.query.sinceTime, "2025-05-01T09:59:00Z");
      assert.ok(read.query.container);
    }
  });
});
