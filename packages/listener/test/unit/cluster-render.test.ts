import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type KubernetesObject,
  loadAllYaml,
  type V1Container,
  type V1Deployment,
  type V1NetworkPolicy,
  type V1PodTemplateSpec,
  type V1Secret,
  type V1Service,
  type V1StatefulSet,
  type V2HorizontalPodAutoscaler,
} from "@kubernetes/client-node";
import {
  type ClusterRevision,
  LABEL_COMPONENT,
  LABEL_DEPLOYMENT,
  LABEL_MANAGED_BY,
  LABEL_NAME,
  LABEL_REVISION,
  SERVICES_IMAGE,
} from "../../src/compute/cluster/cluster-revision.js";
import { renderRevision, toYaml } from "../../src/compute/cluster/render.js";
import { validateAll, wireFormOf } from "@berth/test-support/kubernetes";
import { RESOURCE_SPEC_FIELDS, type ResourceSpec } from "@berth/listener-protocol";
import { DeployError } from "../../src/compute/types.js";

// The cluster renderer: objects checked against Kubernetes' OpenAPI schemas offline, every resource_spec field found where it belongs.

const DEPLOYMENT_ID = "3f2b9c1e-8d4a-4c6b-9e2f-1a2b3c4d5e6f";
const NAMESPACE = "agents";
const PREFIX = "berth-3f2b9c1e";

/** Every field of the spec's ResourceSpec table, each set, as the API stores it. */
const MAXIMAL_SPEC: ResourceSpec = {
  min_scale: 2,
  max_scale: 5,
  cpu: 0.5,
  cpu_limit: 1,
  memory_mb: 1024,
  memory_limit_mb: 2048,
  queue_min_scale: 1,
  queue_max_scale: 4,
  queue_cpu: 0.3,
  queue_cpu_limit: 0.6,
  queue_memory_mb: 512,
  queue_memory_limit_mb: 1536,
  cache_cpu: 0.2,
  cache_cpu_limit: 0.4,
  cache_memory_mb: 256,
  cache_memory_limit_mb: 300,
  labels: { team: "agents", "example.com/tier": "gold" },
  annotations: { "example.com/owner": "ops" },
  service_account_name: "agent-runner",
  image_pull_secrets: [{ name: "registry-login" }],
  volumes: [
    { name: "scratch", emptyDir: { sizeLimit: "1Gi" } },
    { name: "models", persistentVolumeClaim: { claimName: "models" } },
  ],
  volume_mounts: [
    { name: "scratch", mountPath: "/scratch" },
    { name: "models", mountPath: "/models", readOnly: true },
  ],
  init_containers: [
    {
      name: "fetch",
      image: "busybox:1.36",
      command: ["sh", "-c", "echo ready"],
      volumeMounts: [{ name: "models", mountPath: "/models" }],
    },
  ],
  sidecars: [{ name: "proxy", image: "envoyproxy/envoy:v1.30.1", args: ["--config-path", "/etc/envoy.yaml"] }],
  db_cpu: 1,
  db_cpu_limit: 2,
  db_memory_mb: 1024,
  db_memory_limit_mb: 2048,
  db_storage_gi: 20,
  db_max_connections: 200,
};

function revisionOf(extra: Partial<ClusterRevision> = {}): ClusterRevision {
  return {
    deploymentId: DEPLOYMENT_ID,
    deploymentName: "support-bot",
    revisionId: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
    revisionNumber: 3,
    namespace: NAMESPACE,
    image: "registry.example.com/berth/deployment-3f2b9c1e:abc123",
    berthImage: true,
    env: { OPENAI_API_KEY: "sk-secret-value", BERTH_DEPLOYMENT_ID: DEPLOYMENT_ID },
    secretReferences: [{ name: "MODEL_KEY", secret_name: "model-provider", secret_key: "api-key" }],
    resourceSpec: null,
    keda: false,
    passwords: { db: "db-pass/word", cache: "cache-pass" },
    ...extra,
  };
}

const maximal = (extra: Partial<ClusterRevision> = {}) => revisionOf({ resourceSpec: MAXIMAL_SPEC, ...extra });

function find<T extends KubernetesObject>(objects: KubernetesObject[], kind: string, name: string): T {
  const found = objects.find((object) => object.kind === kind && object.metadata?.name === name);
  assert.ok(found, `no ${kind} ${name} in ${objects.map((object) => `${object.kind}/${object.metadata?.name}`).join(", ")}`);
  return found as T;
}

const has = (objects: KubernetesObject[], kind: string, name: string) =>
  objects.some((object) => object.kind === kind && object.metadata?.name === name);

const kindsAndNames = (objects: KubernetesObject[]) => objects.map((object) => `${object.kind}/${object.metadata?.name}`);

const containerOf = (template: V1PodTemplateSpec | undefined, name: string): V1Container => {
  const container = template?.spec?.containers.find((candidate) => candidate.name === name);
  assert.ok(container, `no container ${name}`);
  return container;
};

const envValue = (container: V1Container, name: string) => container.env?.find((variable) => variable.name === name);

const DNS_LABEL = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

describe("cluster rendering", () => {
  test("a minimal revision: its objects in apply order, valid against the Kubernetes schemas", () => {
    const objects = renderRevision(revisionOf());
    assert.deepEqual(kindsAndNames(objects), [
      `Secret/${PREFIX}-env`,
      `Secret/${PREFIX}-db-credentials`,
      `NetworkPolicy/${PREFIX}-api`,
      `Service/${PREFIX}-db`,
      `StatefulSet/${PREFIX}-db`,
      `Service/${PREFIX}-cache`,
      `Deployment/${PREFIX}-cache`,
      `Deployment/${PREFIX}-api`,
      `Deployment/${PREFIX}-queue`,
      `Service/${PREFIX}-api`,
    ]);
    validateAll(objects);
    for (const object of objects) {
      assert.match(object.metadata?.name ?? "", DNS_LABEL);
      assert.equal(object.metadata?.namespace, NAMESPACE);
    }

    const api = find<V1Deployment>(objects, "Deployment", `${PREFIX}-api`);
    assert.equal(api.spec?.replicas, 1);
    assert.deepEqual(api.spec?.strategy, { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
    const server = containerOf(api.spec?.template, "api");
    assert.equal(server.image, revisionOf().image);
    assert.deepEqual(envValue(server, "BERTH_ROLE"), { name: "BERTH_ROLE", value: "api" });
    assert.deepEqual(envValue(server, "PORT"), { name: "PORT", value: "8000" });
    assert.deepEqual(server.envFrom, [{ secretRef: { name: `${PREFIX}-env` } }]);
    assert.deepEqual(server.ports, [{ name: "http", containerPort: 8000, protocol: "TCP" }]);
    for (const probe of [server.readinessProbe, server.livenessProbe])
      assert.deepEqual(probe?.httpGet, { path: "/ok", port: "http" });
    // Nothing sized it: the platform's defaults, every limit set.
    assert.deepEqual(server.resources, {
      requests: { cpu: "1000m", memory: "1024Mi", "ephemeral-storage": "256Mi" },
      limits: { cpu: "2000m", memory: "2048Mi", "ephemeral-storage": "2048Mi" },
    });
    assert.deepEqual(server.securityContext, {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      runAsNonRoot: true,
      runAsUser: 65534,
      runAsGroup: 65534,
      readOnlyRootFilesystem: true,
    });
    assert.deepEqual(server.volumeMounts, [
      { name: "berth-tmp", mountPath: "/tmp" },
      { name: "berth-data", mountPath: "/data" },
    ]);
    assert.equal(api.spec?.template.spec?.automountServiceAccountToken, false);
    assert.equal(api.spec?.template.spec?.serviceAccountName, undefined);

    const queue = find<V1Deployment>(objects, "Deployment", `${PREFIX}-queue`);
    assert.equal(queue.spec?.replicas, 1);
    const worker = containerOf(queue.spec?.template, "queue");
    assert.deepEqual(envValue(worker, "BERTH_ROLE"), { name: "BERTH_ROLE", value: "worker" });
    // The platform's run slots, not the agent server's default: KEDA divides the runs by them.
    assert.deepEqual(envValue(worker, "BERTH_WORKERS"), { name: "BERTH_WORKERS", value: "10" });
    assert.equal(envValue(server, "BERTH_WORKERS"), undefined);
    assert.deepEqual(worker.readinessProbe?.httpGet, { path: "/ok", port: "http" });

    const service = find<V1Service>(objects, "Service", `${PREFIX}-api`);
    assert.equal(service.spec?.type, "ClusterIP");
    assert.deepEqual(service.spec?.ports, [{ name: "http", port: 8000, targetPort: "http", protocol: "TCP" }]);
    assert.deepEqual(service.spec?.selector, api.spec?.selector.matchLabels);

    const postgres = containerOf(find<V1StatefulSet>(objects, "StatefulSet", `${PREFIX}-db`).spec?.template, "postgres");
    assert.equal(postgres.image, SERVICES_IMAGE);
    assert.deepEqual(postgres.command, ["/usr/local/bin/berth-postgres"]);
    assert.deepEqual(envValue(postgres, "POSTGRES_MAX_CONNECTIONS")?.value, "100");
    const claim = find<V1StatefulSet>(objects, "StatefulSet", `${PREFIX}-db`).spec?.volumeClaimTemplates?.[0];
    assert.equal(claim?.spec?.resources?.requests?.storage, "1Gi");
    assert.equal(
      containerOf(find<V1Deployment>(objects, "Deployment", `${PREFIX}-cache`).spec?.template, "redis").command?.[0],
      "/usr/local/bin/berth-redis",
    );
  });

  test("the env lives in the Secret; pods name it, and the secret references, never a value", () => {
    const input = revisionOf({
      secretReferences: [
        { name: "MODEL_KEY", secret_name: "model-provider", secret_key: "api-key" },
        // The deployment's own secret of the same name wins.
        { name: "OPENAI_API_KEY", secret_name: "other", secret_key: "key" },
      ],
    });
    const objects = renderRevision(input);
    const env = find<V1Secret>(objects, "Secret", `${PREFIX}-env`);
    assert.equal(env.type, "Opaque");
    assert.equal(env.stringData?.OPENAI_API_KEY, "sk-secret-value");
    const database = `postgres://berth:db-pass%2Fword@${PREFIX}-db:5432/postgres`;
    const redis = `redis://:cache-pass@${PREFIX}-cache:6379`;
    assert.equal(env.stringData?.DATABASE_URL, database);
    assert.equal(env.stringData?.DATABASE_URI, database);
    assert.equal(env.stringData?.REDIS_URL, redis);
    assert.equal(env.stringData?.REDIS_URI, redis);
    for (const name of [`${PREFIX}-api`, `${PREFIX}-queue`]) {
      const deployment = find<V1Deployment>(objects, "Deployment", name);
      const text = JSON.stringify(deployment);
      for (const secret of ["sk-secret-value", "db-pass", "cache-pass"])
        assert.ok(!text.includes(secret), `${name} inlines ${secret}`);
      const server = deployment.spec!.template.spec!.containers[0];
      assert.deepEqual(envValue(server, "MODEL_KEY")?.valueFrom, { secretKeyRef: { name: "model-provider", key: "api-key" } });
      assert.equal(envValue(server, "OPENAI_API_KEY"), undefined);
    }
    const credentials = find<V1Secret>(objects, "Secret", `${PREFIX}-db-credentials`);
    assert.equal(credentials.stringData?.["db-password"], "db-pass/word");
    assert.equal(credentials.stringData?.["cache-password"], "cache-pass");
    const postgres = find<V1StatefulSet>(objects, "StatefulSet", `${PREFIX}-db`).spec!.template.spec!.containers[0];
    assert.deepEqual(envValue(postgres, "POSTGRES_PASSWORD")?.valueFrom, {
      secretKeyRef: { name: `${PREFIX}-db-credentials`, key: "db-password" },
    });
    const redisContainer = find<V1Deployment>(objects, "Deployment", `${PREFIX}-cache`).spec!.template.spec!.containers[0];
    assert.deepEqual(envValue(redisContainer, "REDIS_PASSWORD")?.valueFrom, {
      secretKeyRef: { name: `${PREFIX}-db-credentials`, key: "cache-password" },
    });
  });

  test("a maximal resource_spec: every object valid against the Kubernetes schemas", () => {
    for (const keda of [false, true]) {
      const objects = renderRevision(maximal({ keda }));
      validateAll(objects);
      for (const object of objects) assert.match(object.metadata?.name ?? "", DNS_LABEL);
    }
  });

  test("every resource_spec field is where it belongs", () => {
    const objects = renderRevision(maximal());
    const kedaObjects = renderRevision(maximal({ keda: true }));
    const deployment = (name: string) => find<V1Deployment>(objects, "Deployment", `${PREFIX}-${name}`);
    const api = containerOf(deployment("api").spec?.template, "api");
    const worker = containerOf(deployment("queue").spec?.template, "queue");
    const redis = containerOf(deployment("cache").spec?.template, "redis");
    const db = find<V1StatefulSet>(objects, "StatefulSet", `${PREFIX}-db`);
    const postgres = containerOf(db.spec?.template, "postgres");
    const hpa = (name: string) => find<V2HorizontalPodAutoscaler>(objects, "HorizontalPodAutoscaler", `${PREFIX}-${name}`);
    const scaledObject = find<KubernetesObject & { spec: { minReplicaCount: number; maxReplicaCount: number } }>(
      kedaObjects,
      "ScaledObject",
      `${PREFIX}-queue`,
    );
    const serverPods = [deployment("api").spec!.template.spec!, deployment("queue").spec!.template.spec!];

    const checks: Record<string, () => void> = {
      min_scale: () => {
        assert.equal(hpa("api").spec?.minReplicas, 2);
        // The HPA owns the count: the Deployment leaves it out.
        assert.equal(deployment("api").spec?.replicas, undefined);
      },
      max_scale: () => assert.equal(hpa("api").spec?.maxReplicas, 5),
      cpu: () => assert.equal(api.resources?.requests?.cpu, "500m"),
      cpu_limit: () => assert.equal(api.resources?.limits?.cpu, "1000m"),
      memory_mb: () => assert.equal(api.resources?.requests?.memory, "1024Mi"),
      memory_limit_mb: () => assert.equal(api.resources?.limits?.memory, "2048Mi"),
      queue_min_scale: () => {
        assert.equal(hpa("queue").spec?.minReplicas, 1);
        assert.equal(scaledObject.spec.minReplicaCount, 1);
      },
      queue_max_scale: () => {
        assert.equal(hpa("queue").spec?.maxReplicas, 4);
        assert.equal(scaledObject.spec.maxReplicaCount, 4);
      },
      queue_cpu: () => assert.equal(worker.resources?.requests?.cpu, "300m"),
      queue_cpu_limit: () => assert.equal(worker.resources?.limits?.cpu, "600m"),
      queue_memory_mb: () => assert.equal(worker.resources?.requests?.memory, "512Mi"),
      queue_memory_limit_mb: () => assert.equal(worker.resources?.limits?.memory, "1536Mi"),
      cache_cpu: () => assert.equal(redis.resources?.requests?.cpu, "200m"),
      cache_cpu_limit: () => assert.equal(redis.resources?.limits?.cpu, "400m"),
      cache_memory_mb: () => assert.equal(redis.resources?.requests?.memory, "256Mi"),
      cache_memory_limit_mb: () => {
        assert.equal(redis.resources?.limits?.memory, "300Mi");
        assert.equal(envValue(redis, "REDIS_MAXMEMORY")?.value, "270mb");
      },
      labels: () => {
        for (const object of objects) {
          assert.equal(object.metadata?.labels?.team, "agents");
          assert.equal(object.metadata?.labels?.["example.com/tier"], "gold");
        }
        for (const template of templatesOf(objects)) assert.equal(template.metadata?.labels?.team, "agents");
      },
      annotations: () => {
        for (const object of objects) assert.equal(object.metadata?.annotations?.["example.com/owner"], "ops");
        for (const template of templatesOf(objects)) assert.equal(template.metadata?.annotations?.["example.com/owner"], "ops");
      },
      service_account_name: () => {
        for (const pod of serverPods) {
          assert.equal(pod.serviceAccountName, "agent-runner");
          assert.equal(pod.automountServiceAccountToken, undefined);
        }
      },
      image_pull_secrets: () => {
        for (const pod of serverPods) assert.deepEqual(pod.imagePullSecrets, [{ name: "registry-login" }]);
      },
      volumes: () => {
        for (const pod of serverPods)
          assert.deepEqual(pod.volumes?.slice(-2), [
            { name: "scratch", emptyDir: { sizeLimit: "1Gi" } },
            { name: "models", persistentVolumeClaim: { claimName: "models" } },
          ]);
      },
      volume_mounts: () => {
        for (const container of [api, worker])
          assert.deepEqual(container.volumeMounts?.slice(-2), [
            { name: "scratch", mountPath: "/scratch" },
            { name: "models", mountPath: "/models", readOnly: true },
          ]);
      },
      init_containers: () => {
        for (const pod of serverPods) {
          assert.equal(pod.initContainers?.length, 1);
          assert.equal(pod.initContainers?.[0].image, "busybox:1.36");
          assert.deepEqual(pod.initContainers?.[0].command, ["sh", "-c", "echo ready"]);
          assert.deepEqual(pod.initContainers?.[0].securityContext, {
            allowPrivilegeEscalation: false,
            capabilities: { drop: ["ALL"] },
          });
        }
      },
      sidecars: () => {
        for (const pod of serverPods) {
          assert.equal(pod.containers.length, 2);
          assert.equal(pod.containers[1].name, "proxy");
          assert.equal(pod.containers[1].image, "envoyproxy/envoy:v1.30.1");
          assert.deepEqual(pod.containers[1].securityContext, {
            allowPrivilegeEscalation: false,
            capabilities: { drop: ["ALL"] },
          });
        }
      },
      db_cpu: () => assert.equal(postgres.resources?.requests?.cpu, "1000m"),
      db_cpu_limit: () => assert.equal(postgres.resources?.limits?.cpu, "2000m"),
      db_memory_mb: () => assert.equal(postgres.resources?.requests?.memory, "1024Mi"),
      db_memory_limit_mb: () => assert.equal(postgres.resources?.limits?.memory, "2048Mi"),
      db_storage_gi: () => {
        const claim = db.spec?.volumeClaimTemplates?.[0];
        assert.equal(claim?.spec?.resources?.requests?.storage, "20Gi");
        assert.deepEqual(
          postgres.volumeMounts?.find((mount) => mount.name === claim?.metadata?.name)?.mountPath,
          "/var/lib/berth-postgres",
        );
      },
      db_max_connections: () => assert.equal(envValue(postgres, "POSTGRES_MAX_CONNECTIONS")?.value, "200"),
    };
    assert.deepEqual(
      Object.keys(checks).sort(),
      [...RESOURCE_SPEC_FIELDS].sort(),
      "one check per field of the spec's ResourceSpec",
    );
    for (const field of RESOURCE_SPEC_FIELDS) assert.notEqual(MAXIMAL_SPEC[field], null, `${field} is set`);
    for (const [field, check] of Object.entries(checks)) {
      try {
        check();
      } catch (error) {
        throw new Error(`resource_spec.${field}: ${(error as Error).message}`);
      }
    }
  });

  test("the maximal object list", () => {
    assert.deepEqual(kindsAndNames(renderRevision(maximal())), [
      `Secret/${PREFIX}-env`,
      `Secret/${PREFIX}-db-credentials`,
      `NetworkPolicy/${PREFIX}-api`,
      `Service/${PREFIX}-db`,
      `StatefulSet/${PREFIX}-db`,
      `Service/${PREFIX}-cache`,
      `Deployment/${PREFIX}-cache`,
      `Deployment/${PREFIX}-api`,
      `Deployment/${PREFIX}-queue`,
      `Service/${PREFIX}-api`,
      `HorizontalPodAutoscaler/${PREFIX}-api`,
      `HorizontalPodAutoscaler/${PREFIX}-queue`,
    ]);
  });

  test("ownership labels on every object and pod template", () => {
    for (const input of [revisionOf(), maximal(), maximal({ keda: true })]) {
      const objects = renderRevision(input);
      for (const object of objects) {
        const labels = object.metadata?.labels ?? {};
        const where = `${object.kind}/${object.metadata?.name}`;
        assert.equal(labels[LABEL_MANAGED_BY], "berth", where);
        assert.equal(labels[LABEL_NAME], "support-bot", where);
        assert.equal(labels[LABEL_DEPLOYMENT], DEPLOYMENT_ID, where);
        assert.equal(labels[LABEL_REVISION], input.revisionId, where);
        assert.ok(["api", "queue", "db", "cache"].includes(labels[LABEL_COMPONENT]), where);
        for (const [key, value] of Object.entries(labels)) assert.match(value, LABEL_VALUE, `${where} ${key}`);
      }
      for (const template of templatesOf(objects)) {
        const labels = template.metadata?.labels ?? {};
        assert.equal(labels[LABEL_MANAGED_BY], "berth");
        assert.equal(labels[LABEL_NAME], "support-bot");
        assert.equal(labels[LABEL_DEPLOYMENT], DEPLOYMENT_ID);
        const component = labels[LABEL_COMPONENT];
        // The servers roll at each revision; the database and cache keep running.
        if (component === "api" || component === "queue") assert.equal(labels[LABEL_REVISION], input.revisionId);
        else assert.equal(labels[LABEL_REVISION], undefined);
      }
    }
    const components = Object.fromEntries(
      renderRevision(maximal()).map((object) => [
        `${object.kind}/${object.metadata?.name}`,
        object.metadata?.labels?.[LABEL_COMPONENT],
      ]),
    );
    assert.equal(components[`Deployment/${PREFIX}-api`], "api");
    assert.equal(components[`Deployment/${PREFIX}-queue`], "queue");
    assert.equal(components[`StatefulSet/${PREFIX}-db`], "db");
    assert.equal(components[`Deployment/${PREFIX}-cache`], "cache");
  });

  test("names and selectors stay the same across revisions: a new revision updates the objects in place", () => {
    const first = renderRevision(maximal());
    const second = renderRevision(maximal({ revisionId: "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", revisionNumber: 4 }));
    assert.deepEqual(kindsAndNames(second), kindsAndNames(first));
    for (const [index, object] of first.entries()) {
      const selector = (candidate: KubernetesObject) => (candidate as { spec?: { selector?: unknown } }).spec?.selector;
      assert.deepEqual(selector(second[index]), selector(object));
    }
    const db = (objects: KubernetesObject[]) => find<V1StatefulSet>(objects, "StatefulSet", `${PREFIX}-db`).spec;
    // Kubernetes refuses changes to a StatefulSet's claim templates; the pod template unchanged keeps PostgreSQL running.
    assert.deepEqual(db(second)?.volumeClaimTemplates, db(first)?.volumeClaimTemplates);
    assert.deepEqual(db(second)?.template, db(first)?.template);
  });

  test("KEDA: a ScaledObject on the runs in flight for the workers instead of their HPA", () => {
    const objects = renderRevision(maximal({ keda: true, env: { BERTH_WORKERS: "4" } }));
    assert.ok(!has(objects, "HorizontalPodAutoscaler", `${PREFIX}-queue`));
    assert.ok(has(objects, "HorizontalPodAutoscaler", `${PREFIX}-api`));
    const scaled = find<KubernetesObject & { spec: Record<string, unknown> }>(objects, "ScaledObject", `${PREFIX}-queue`);
    assert.equal(scaled.apiVersion, "keda.sh/v1alpha1");
    // The workers read the deployment's BERTH_WORKERS from the env Secret: no inline value overrides it.
    const queueWorker = containerOf(find<V1Deployment>(objects, "Deployment", `${PREFIX}-queue`).spec?.template, "queue");
    assert.equal(envValue(queueWorker, "BERTH_WORKERS"), undefined);
    assert.deepEqual(scaled.spec, {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: `${PREFIX}-queue` },
      minReplicaCount: 1,
      maxReplicaCount: 4,
      triggers: [
        {
          type: "postgresql",
          metadata: { query: "SELECT count(*) FROM runs WHERE status IN ('pending', 'running')", targetQueryValue: "4" },
          authenticationRef: { name: `${PREFIX}-queue` },
        },
      ],
    });
    const authentication = find<KubernetesObject & { spec: unknown }>(objects, "TriggerAuthentication", `${PREFIX}-queue`);
    assert.deepEqual(authentication.spec, {
      secretTargetRef: [{ parameter: "connection", name: `${PREFIX}-db-credentials`, key: "scaler-connection" }],
    });
    const credentials = find<V1Secret>(objects, "Secret", `${PREFIX}-db-credentials`);
    assert.equal(
      credentials.stringData?.["scaler-connection"],
      `postgres://berth:db-pass%2Fword@${PREFIX}-db.${NAMESPACE}.svc:5432/postgres?sslmode=disable`,
    );
    // The authentication precedes the ScaledObject that names it; scaling comes last.
    const order = kindsAndNames(objects);
    assert.ok(order.indexOf(`TriggerAuthentication/${PREFIX}-queue`) < order.indexOf(`ScaledObject/${PREFIX}-queue`));
    assert.equal(order.at(-1), `ScaledObject/${PREFIX}-queue`);
    assert.equal(find<V1Deployment>(objects, "Deployment", `${PREFIX}-queue`).spec?.replicas, undefined);

    // Without BERTH_WORKERS: the platform's run slots, which the workers are given. KEDA may take the workers down to none.
    const idle = renderRevision(revisionOf({ keda: true, resourceSpec: { queue_min_scale: 0, queue_max_scale: 3 } }));
    const idleScaled = find<
      KubernetesObject & { spec: { minReplicaCount: number; triggers: { metadata: Record<string, string> }[] } }
    >(idle, "ScaledObject", `${PREFIX}-queue`);
    assert.equal(idleScaled.spec.minReplicaCount, 0);
    assert.equal(idleScaled.spec.triggers[0].metadata.targetQueryValue, "10");

    // Without KEDA the workers scale on CPU, and never below one (an HPA's minimum).
    const plain = renderRevision(revisionOf({ resourceSpec: { queue_min_scale: 0, queue_max_scale: 3 } }));
    assert.ok(!plain.some((object) => object.apiVersion === "keda.sh/v1alpha1"));
    const queueHpa = find<V2HorizontalPodAutoscaler>(plain, "HorizontalPodAutoscaler", `${PREFIX}-queue`);
    assert.equal(queueHpa.spec?.minReplicas, 1);
    assert.deepEqual(queueHpa.spec?.metrics, [
      { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } } },
    ]);
    validateAll(idle);
    validateAll(plain);
  });

  test("every container has CPU, memory and ephemeral-storage requests and limits, within its limits", () => {
    const containersOf = (objects: KubernetesObject[]) =>
      objects.flatMap((object) => {
        const template = (object as V1Deployment).spec?.template;
        return [...(template?.spec?.initContainers ?? []), ...(template?.spec?.containers ?? [])].map((container) => ({
          where: `${object.kind}/${object.metadata?.name}/${container.name}`,
          container,
        }));
      });
    const ownSidecar = {
      sidecars: [{ name: "own", image: "busybox:1.36", resources: { requests: { memory: "1Gi" }, limits: { cpu: "2" } } }],
    };
    for (const input of [revisionOf(), maximal(), maximal({ keda: true }), revisionOf({ resourceSpec: ownSidecar })]) {
      const found = containersOf(renderRevision(input));
      assert.ok(found.length >= 4);
      for (const { where, container } of found) {
        for (const resource of ["cpu", "memory", "ephemeral-storage"]) {
          assert.ok(container.resources?.limits?.[resource], `${where}: a ${resource} limit`);
          assert.ok(container.resources?.requests?.[resource], `${where}: a ${resource} request`);
        }
      }
    }
    // A sidecar's own resources are kept; what they leave out is filled in, never below its own request.
    const [sidecar] = containersOf(renderRevision(revisionOf({ resourceSpec: ownSidecar }))).filter(
      ({ container }) => container.name === "own",
    );
    assert.deepEqual(sidecar?.container.resources, {
      requests: { cpu: "250m", memory: "1Gi", "ephemeral-storage": "64Mi" },
      limits: { cpu: "2", memory: "1Gi", "ephemeral-storage": "512Mi" },
    });
    // The deployment_type's preset sizes the servers resource_spec does not.
    const preset = renderRevision(revisionOf({ sizePreset: { memoryLimitMb: 512, cpu: 0.5 } }));
    for (const name of ["api", "queue"]) {
      const server = containerOf(find<V1Deployment>(preset, "Deployment", `${PREFIX}-${name}`).spec?.template, name);
      assert.deepEqual(server.resources?.limits, { cpu: "500m", memory: "512Mi", "ephemeral-storage": "2048Mi" });
      assert.deepEqual(server.resources?.requests, { cpu: "250m", memory: "256Mi", "ephemeral-storage": "256Mi" });
    }
    // Redis evicts below the memory limit it got, a default one too.
    const redis = containerOf(
      find<V1Deployment>(renderRevision(revisionOf()), "Deployment", `${PREFIX}-cache`).spec?.template,
      "redis",
    );
    assert.equal(envValue(redis, "REDIS_MAXMEMORY")?.value, "230mb");
  });

  test("a NetworkPolicy: requests from the platform, ingress and its own pods; egress to DNS, the control plane and the internet, no private range", () => {
    const input = revisionOf({
      env: {
        LANGSMITH_ENDPOINT: "http://berth-control-plane.berth.svc:8000/api/v1",
        BERTH_AUTH_SERVICE_URL: "http://berth-control-plane.berth.svc:8000",
      },
      keda: true,
      network: {
        platformNamespace: "berth",
        ingressNamespaces: ["ingress-nginx"],
        kedaNamespace: "keda",
        blockedCidrs: ["203.0.113.0/24", "2001:db8::/32"],
      },
    });
    const objects = renderRevision(input);
    validateAll(objects);
    const policy = wireFormOf(find<V1NetworkPolicy>(objects, "NetworkPolicy", `${PREFIX}-api`)) as {
      spec: Record<string, unknown>;
      metadata: { labels: Record<string, string> };
    };
    const own = { podSelector: { matchLabels: { [LABEL_DEPLOYMENT]: DEPLOYMENT_ID } } };
    const namespace = (name: string) => ({ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": name } } });
    assert.equal(policy.metadata.labels[LABEL_DEPLOYMENT], DEPLOYMENT_ID);
    assert.deepEqual(policy.spec, {
      podSelector: own.podSelector,
      policyTypes: ["Ingress", "Egress"],
      ingress: [
        { from: [own] },
        { from: [namespace("berth"), namespace("ingress-nginx")], ports: [{ protocol: "TCP", port: 8000 }] },
        { from: [namespace("keda")], ports: [{ protocol: "TCP", port: 5432 }] },
      ],
      egress: [
        { to: [own] },
        {
          to: [{ namespaceSelector: {}, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }],
          ports: [
            { protocol: "UDP", port: 53 },
            { protocol: "TCP", port: 53 },
          ],
        },
        // The tracing API and the Auth Service: one rule, the control plane's namespace on its port.
        { to: [namespace("berth")], ports: [{ protocol: "TCP", port: 8000 }] },
        {
          to: [
            {
              ipBlock: {
                cidr: "0.0.0.0/0",
                except: [
                  "0.0.0.0/8",
                  "10.0.0.0/8",
                  "100.64.0.0/10",
                  "127.0.0.0/8",
                  "169.254.0.0/16",
                  "172.16.0.0/12",
                  "192.0.0.0/24",
                  "192.168.0.0/16",
                  "198.18.0.0/15",
                  "224.0.0.0/3",
                  "203.0.113.0/24",
                ],
              },
            },
            { ipBlock: { cidr: "::/0", except: ["::1/128", "fc00::/7", "fe80::/10", "ff00::/8", "2001:db8::/32"] } },
          ],
        },
      ],
    });
    // A control plane at an address: that address and port; at a public name: the internet rule covers it.
    const atAddress = wireFormOf(
      find(
        renderRevision(revisionOf({ env: { LANGSMITH_ENDPOINT: "https://10.1.2.3:8443/api/v1" } })),
        "NetworkPolicy",
        `${PREFIX}-api`,
      ),
    ) as { spec: { egress: unknown[]; ingress: unknown[] } };
    assert.deepEqual(atAddress.spec.egress[2], {
      to: [{ ipBlock: { cidr: "10.1.2.3/32" } }],
      ports: [{ protocol: "TCP", port: 8443 }],
    });
    assert.equal(atAddress.spec.ingress.length, 2, "no KEDA rule without KEDA");
    const publicName = wireFormOf(
      find(
        renderRevision(revisionOf({ env: { LANGSMITH_ENDPOINT: "https://berth.example.com/api/v1" } })),
        "NetworkPolicy",
        `${PREFIX}-api`,
      ),
    ) as { spec: { egress: unknown[] } };
    assert.equal(publicName.spec.egress.length, 3);
  });

  test("fixed replica counts when min equals max: no autoscaler", () => {
    const objects = renderRevision(
      revisionOf({ resourceSpec: { min_scale: 3, max_scale: 3, queue_min_scale: 2, queue_max_scale: 2 } }),
    );
    assert.equal(find<V1Deployment>(objects, "Deployment", `${PREFIX}-api`).spec?.replicas, 3);
    assert.equal(find<V1Deployment>(objects, "Deployment", `${PREFIX}-queue`).spec?.replicas, 2);
    assert.ok(!objects.some((object) => object.kind === "HorizontalPodAutoscaler" || object.kind === "ScaledObject"));
  });

  test("an external database: no PostgreSQL, DATABASE_URL is its URL", () => {
    const url = "postgres://app:pw@db.example.com:5432/agents?sslmode=require";
    const objects = renderRevision(maximal({ externalDatabaseUrl: url, keda: true }));
    assert.ok(!objects.some((object) => object.kind === "StatefulSet"));
    assert.ok(!has(objects, "Service", `${PREFIX}-db`));
    const env = find<V1Secret>(objects, "Secret", `${PREFIX}-env`);
    assert.equal(env.stringData?.DATABASE_URL, url);
    assert.equal(env.stringData?.DATABASE_URI, url);
    assert.equal(env.stringData?.REDIS_URL, `redis://:cache-pass@${PREFIX}-cache:6379`);
    const credentials = find<V1Secret>(objects, "Secret", `${PREFIX}-db-credentials`);
    assert.equal(credentials.stringData?.["db-password"], undefined);
    assert.equal(credentials.stringData?.["scaler-connection"], url);
    assert.ok(has(objects, "Deployment", `${PREFIX}-cache`));
    validateAll(objects);
  });

  test("an external image keeps its user and a writable root; the services image can be named", () => {
    const objects = renderRevision(
      revisionOf({
        berthImage: false,
        servicesImage: "registry.example.com/berth/services:1",
        servicesUsers: { db: 999, cache: 998 },
      }),
    );
    const api = find<V1Deployment>(objects, "Deployment", `${PREFIX}-api`);
    const server = containerOf(api.spec?.template, "api");
    assert.deepEqual(server.securityContext, { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
    assert.equal(server.imagePullPolicy, "Always");
    assert.deepEqual(server.volumeMounts, [{ name: "berth-data", mountPath: "/data" }]);
    const db = find<V1StatefulSet>(objects, "StatefulSet", `${PREFIX}-db`);
    assert.equal(db.spec?.template.spec?.containers[0].image, "registry.example.com/berth/services:1");
    assert.equal(db.spec?.template.spec?.securityContext?.runAsUser, 999);
    assert.equal(db.spec?.template.spec?.securityContext?.fsGroup, 999);
    const cache = find<V1Deployment>(objects, "Deployment", `${PREFIX}-cache`);
    assert.equal(cache.spec?.template.spec?.securityContext?.runAsUser, 998);
    validateAll(objects);
  });

  test("a resource_spec of the wrong shape fails with the field named", () => {
    const failing: [Record<string, unknown>, RegExp][] = [
      [{ volumes: ["scratch"] }, /resource_spec\.volumes must be a list of objects/],
      [{ volume_mounts: [{ name: "nowhere", mountPath: "/x" }] }, /no volume named "nowhere"/],
      [
        { volumes: [{ name: "v", emptyDir: {} }], volume_mounts: [{ name: "v", mountPath: "/data" }] },
        /may not be mounted at \/data/,
      ],
      [{ volumes: [{ name: "root", hostPath: { path: "/" } }] }, /hostPath is not allowed/],
      [{ volumes: [{ name: "berth-tmp", emptyDir: {} }] }, /the platform's own/],
      [{ sidecars: [{ name: "no-image" }] }, /needs an image/],
      [{ image_pull_secrets: [{}] }, /image_pull_secrets\[0\] needs a name/],
      [{ cpu: "lots" }, /resource_spec\.cpu must be a number/],
      [{ labels: { team: 3 } }, /resource_spec\.labels must map names to strings/],
    ];
    for (const [resourceSpec, message] of failing) {
      assert.throws(
        () => renderRevision(revisionOf({ resourceSpec })),
        (error: unknown) => error instanceof DeployError && message.test(error.message),
        JSON.stringify(resourceSpec),
      );
    }
  });

  test("pure: the same input renders the same objects, and they share nothing with it", () => {
    const input = maximal({ keda: true });
    const before = structuredClone(input);
    const first = renderRevision(input);
    assert.deepEqual(renderRevision(structuredClone(input)), first);
    assert.deepEqual(input, before);
    const api = find<V1Deployment>(first, "Deployment", `${PREFIX}-api`);
    api.spec!.template.spec!.volumes!.at(-1)!.name = "changed";
    api.spec!.template.spec!.containers[1].image = "changed";
    assert.deepEqual(input, before);
    assert.deepEqual(renderRevision(input), renderRevision(structuredClone(before)));
  });

  test("toYaml: one document per object, read back to the same objects", () => {
    for (const input of [revisionOf(), maximal(), maximal({ keda: true })]) {
      const objects = renderRevision(input);
      const yaml = toYaml(objects);
      assert.equal(yaml.split(/^---$/m).length, objects.length);
      // The client's serializer keeps only the fields its models know: equality also says no field is misspelt.
      const plain = (value: unknown) => JSON.parse(JSON.stringify(value));
      assert.deepEqual(plain(loadAllYaml(yaml)), plain(objects));
    }
  });
});

function templatesOf(objects: KubernetesObject[]): V1PodTemplateSpec[] {
  return objects
    .filter((object) => object.kind === "Deployment" || object.kind === "StatefulSet")
    .map((object) => (object as V1Deployment | V1StatefulSet).spec!.template);
}
