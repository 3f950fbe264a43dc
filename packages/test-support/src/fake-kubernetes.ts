// A stateful fake of the Kubernetes API server for tests (no cluster can run where Berth is tested):
// node:http on 127.0.0.1 answering discovery, server-side apply, get, list by label selector and delete,
// with the bodies a real API server sends (typed lists without kind on items, Status objects for errors
// and deletions). It simulates the controllers just enough for a rollout: a Deployment gets a ReplicaSet
// and a pod per replica, a StatefulSet its pods and volume claims, and the garbage collector deletes
// dependents with their owner. Pods run and are ready unless the test makes their image fail (failImage).
// It is a model of the API, not the API: it was written from the API's documentation and the requests
// @kubernetes/client-node sends, not checked against a live cluster.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadYaml } from "@kubernetes/client-node";

// ---------------------------------------------------------------- discovery and Status documents, as a 1.30 API server answers

const VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

/** One entry of an APIResourceList; a subresource (`pods/log`) gets the subresource verbs. */
export function apiResource(name: string, kind: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    singularName: name.includes("/") ? "" : kind.toLowerCase(),
    namespaced: true,
    kind,
    verbs: name.includes("/") ? ["get", "patch", "update"] : VERBS,
    ...extra,
  };
}

/** The discovery documents of the group versions Berth uses, by path. */
export const DISCOVERY: Readonly<Record<string, unknown>> = {
  "/api/v1": {
    kind: "APIResourceList",
    groupVersion: "v1",
    resources: [
      apiResource("persistentvolumeclaims", "PersistentVolumeClaim", { shortNames: ["pvc"] }),
      apiResource("persistentvolumeclaims/status", "PersistentVolumeClaim"),
      apiResource("pods", "Pod", { shortNames: ["po"], categories: ["all"] }),
      apiResource("pods/log", "Pod", { verbs: ["get"] }),
      apiResource("pods/status", "Pod"),
      apiResource("secrets", "Secret"),
      apiResource("services", "Service", { shortNames: ["svc"], categories: ["all"] }),
      apiResource("services/status", "Service"),
    ],
  },
  "/apis/apps/v1": {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: "apps/v1",
    resources: [
      apiResource("deployments", "Deployment", { shortNames: ["deploy"], categories: ["all"] }),
      apiResource("deployments/scale", "Scale", { group: "autoscaling", version: "v1" }),
      apiResource("deployments/status", "Deployment"),
      apiResource("replicasets", "ReplicaSet", { shortNames: ["rs"], categories: ["all"] }),
      apiResource("replicasets/status", "ReplicaSet"),
      apiResource("statefulsets", "StatefulSet", { shortNames: ["sts"], categories: ["all"] }),
      apiResource("statefulsets/status", "StatefulSet"),
    ],
  },
  "/apis/autoscaling/v2": {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: "autoscaling/v2",
    resources: [
      apiResource("horizontalpodautoscalers", "HorizontalPodAutoscaler", { shortNames: ["hpa"], categories: ["all"] }),
      apiResource("horizontalpodautoscalers/status", "HorizontalPodAutoscaler"),
    ],
  },
  "/apis/networking.k8s.io/v1": {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: "networking.k8s.io/v1",
    resources: [apiResource("networkpolicies", "NetworkPolicy", { shortNames: ["netpol"] })],
  },
};

/** KEDA's group version, served only when the fake is started with `keda: true`. */
export const KEDA_DISCOVERY = {
  path: "/apis/keda.sh/v1alpha1",
  body: {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: "keda.sh/v1alpha1",
    resources: [
      apiResource("scaledobjects", "ScaledObject", { shortNames: ["so"] }),
      apiResource("scaledobjects/status", "ScaledObject"),
      apiResource("triggerauthentications", "TriggerAuthentication", { shortNames: ["ta"] }),
      apiResource("triggerauthentications/status", "TriggerAuthentication"),
    ],
  },
};

/** A failure Status object (the body of every error answer). */
export function failureStatus(code: number, reason: string, message: string, details: Record<string, unknown> = {}) {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, details, code };
}

export function notFoundStatus(
  message = "the server could not find the requested resource",
  details: Record<string, unknown> = {},
) {
  return failureStatus(404, "NotFound", message, details);
}

/** What a DELETE of an object answers once it is gone (details.kind is the resource, as the API server puts it). */
export function successStatus(details: { name: string; kind: string; group?: string; uid?: string }) {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details };
}

// ---------------------------------------------------------------- the fake

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
  authorization: string | undefined;
  /** The parsed body (JSON, else YAML), the raw text when neither parses, undefined when empty. */
  body: unknown;
}

/** An object's metadata as JSON carries it (timestamps are strings). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }[];
  managedFields?: { manager: string; operation: string; apiVersion?: string; time?: string; fieldsType?: string }[];
  [field: string]: unknown;
}

/** A stored object: what a GET answers (with apiVersion and kind). */
export interface StoredObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface FakeKubernetesOptions {
  /** Serve keda.sh/v1alpha1 (ScaledObject, TriggerAuthentication); absent by default, as on a cluster without KEDA. */
  keda?: boolean;
  /** The bearer token every request must carry. */
  token?: string;
}

export interface FakeKubernetes {
  url: string;
  /** A kubeconfig with one context (the current one) reaching the fake with the token, TLS unchecked (http). */
  kubeconfigFile: string;
  /** Copies of the stored objects, optionally of one kind and namespace, in creation order. */
  objects(kind?: string, namespace?: string): StoredObject[];
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** From now on, containers of this image do not start: they wait with this reason (ImagePullBackOff, CrashLoopBackOff...). */
  failImage(image: string, reason: string, message?: string): void;
  close(): Promise<void>;
}

interface Resource {
  group: string;
  version: string;
  plural: string;
  kind: string;
  hasStatus: boolean;
}

interface Failure {
  reason: string;
  message: string;
}

const DEFAULT_TOKEN = "fake-kubernetes-token";
const APPLY = "application/apply-patch+yaml";

/** Starts the fake on a free port of 127.0.0.1 and writes its kubeconfig. */
export async function startFakeKubernetes(options: FakeKubernetesOptions = {}): Promise<FakeKubernetes> {
  const token = options.token ?? DEFAULT_TOKEN;
  const discovery: Record<string, unknown> = { ...DISCOVERY };
  if (options.keda) discovery[KEDA_DISCOVERY.path] = KEDA_DISCOVERY.body;
  const cluster = new FakeCluster(resourcesOf(discovery));
  const requests: RecordedRequest[] = [];

  const server = createServer((req, res) => {
    void (async () => {
      const request = await recordRequest(req);
      requests.push(request);
      const answer =
        request.authorization === `Bearer ${token}`
          ? handle(request, discovery, cluster)
          : { status: 401, body: failureStatus(401, "Unauthorized", "Unauthorized") };
      send(res, answer);
    })().catch((error: unknown) => send(res, { status: 500, body: failureStatus(500, "InternalError", String(error)) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const dir = mkdtempSync(join(tmpdir(), "berth-fake-kube-"));
  const kubeconfigFile = join(dir, "kubeconfig");
  // client-node refuses an http:// server unless TLS verification is off.
  writeFileSync(
    kubeconfigFile,
    `apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: ${url}
    insecure-skip-tls-verify: true
users:
- name: berth
  user:
    token: ${token}
contexts:
- name: fake
  context:
    cluster: fake
    user: berth
current-context: fake
`,
    { mode: 0o600 },
  );

  return {
    url,
    kubeconfigFile,
    requests,
    objects: (kind, namespace) => cluster.all(kind, namespace),
    failImage(image, reason, message) {
      cluster.failures.set(image, { reason, message: message ?? `Back-off pulling image "${image}"` });
      cluster.reconcile();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function resourcesOf(discovery: Record<string, unknown>): Resource[] {
  const resources: Resource[] = [];
  for (const document of Object.values(discovery)) {
    const { groupVersion, resources: entries } = document as {
      groupVersion: string;
      resources: { name: string; kind: string }[];
    };
    const [group, version] = groupVersion.includes("/") ? groupVersion.split("/") : ["", groupVersion];
    for (const entry of entries) {
      if (entry.name.includes("/")) continue;
      resources.push({
        group: group!,
        version: version!,
        plural: entry.name,
        kind: entry.kind,
        hasStatus: entries.some((other) => other.name === `${entry.name}/status`),
      });
    }
  }
  return resources;
}

/** A request as the fakes record it for assertions. */
export async function recordRequest(req: IncomingMessage): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  const url = new URL(req.url ?? "/", "http://fake");
  let body: unknown;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      try {
        body = loadYaml(text);
      } catch {
        body = text;
      }
    }
  }
  return {
    method: req.method ?? "",
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    contentType: req.headers["content-type"]?.split(";")[0]?.trim(),
    authorization: req.headers.authorization,
    body,
  };
}

interface Answer {
  status?: number;
  body: unknown;
  contentType?: string;
}

function send(res: ServerResponse, answer: Answer): void {
  if (res.headersSent) return;
  res.writeHead(answer.status ?? 200, { "content-type": answer.contentType ?? "application/json" });
  res.end(typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body));
}

// ---------------------------------------------------------------- routing

function handle(request: RecordedRequest, discovery: Record<string, unknown>, cluster: FakeCluster): Answer {
  const { method, path } = request;
  if (method === "GET" && path === "/api") return { body: { kind: "APIVersions", versions: ["v1"] } };
  if (method === "GET" && path === "/apis") return { body: apiGroupList(discovery) };
  if (method === "GET" && Object.hasOwn(discovery, path)) return { body: discovery[path] };

  const segments = path.split("/").filter(Boolean);
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === "api" && segments.length >= 2) {
    [group, version, rest] = ["", segments[1]!, segments.slice(2)];
  } else if (segments[0] === "apis" && segments.length >= 3) {
    [group, version, rest] = [segments[1]!, segments[2]!, segments.slice(3)];
  } else {
    return { status: 404, body: notFoundStatus() };
  }
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource, ...extra] = rest;
  const resource = cluster.resources.find((r) => r.group === group && r.version === version && r.plural === plural);
  if (!resource || extra.length > 0) return { status: 404, body: notFoundStatus() };

  if (name === undefined) {
    if (method !== "GET") return methodNotAllowed(method);
    return cluster.list(resource, namespace, request.query.labelSelector);
  }
  if (namespace === undefined) return { status: 404, body: notFoundStatus() };
  if (subresource === "log" && resource.kind === "Pod" && method === "GET") {
    const found = cluster.get(resource, namespace, name);
    if ((found.status ?? 200) !== 200) return found;
    // A started container has said one line, at its pod's creation (timestamps=true puts the time first).
    const pod = found.body as { metadata?: { creationTimestamp?: string } };
    const container = request.query.container ?? "main";
    const at = pod.metadata?.creationTimestamp ?? new Date().toISOString();
    // Like a kubelet, sinceTime counts in whole seconds: lines from earlier in that second come again.
    const since = request.query.sinceTime;
    const shown = since === undefined || Date.parse(at) >= Math.floor(Date.parse(since) / 1000) * 1000;
    return { body: shown ? `${at} ${container} is serving\n` : "", contentType: "text/plain" };
  }
  if (subresource !== undefined) return { status: 404, body: notFoundStatus() };
  switch (method) {
    case "GET":
      return cluster.get(resource, namespace, name);
    case "PATCH":
      if (request.contentType !== APPLY) {
        return {
          status: 415,
          body: failureStatus(
            415,
            "UnsupportedMediaType",
            `the fake only takes server-side apply (${APPLY}), not ${request.contentType}`,
          ),
        };
      }
      return cluster.apply(resource, namespace, name, request);
    case "DELETE":
      return cluster.delete(resource, namespace, name);
    default:
      return methodNotAllowed(method);
  }
}

function methodNotAllowed(method: string): Answer {
  return { status: 405, body: failureStatus(405, "MethodNotAllowed", `the fake does not serve ${method} here`) };
}

function apiGroupList(discovery: Record<string, unknown>) {
  const groups = Object.keys(discovery)
    .filter((path) => path.startsWith("/apis/"))
    .map((path) => {
      const [, , name, version] = path.split("/");
      const groupVersion = { groupVersion: `${name}/${version}`, version };
      return { name, versions: [groupVersion], preferredVersion: groupVersion };
    });
  return { kind: "APIGroupList", apiVersion: "v1", groups };
}

// ---------------------------------------------------------------- label selectors

type Requirement = (labels: Record<string, string>) => boolean;

/** A label selector's requirements (equality, inequality, in, notin, exists, !exists); throws on a malformed one. */
export function parseLabelSelector(selector: string): Requirement[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of selector) {
    if (char === "(") depth += 1;
    if (char === ")") depth -= 1;
    if (char === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else current += char;
  }
  parts.push(current);
  return parts
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part): Requirement => {
      const set = /^([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
      if (set) {
        const [, key, operator, list] = set;
        const values = list!.split(",").map((value) => value.trim());
        return operator === "in"
          ? (labels) => Object.hasOwn(labels, key!) && values.includes(labels[key!]!)
          : (labels) => !Object.hasOwn(labels, key!) || !values.includes(labels[key!]!);
      }
      const equality = /^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/.exec(part);
      if (equality) {
        const [, key, operator, value] = equality;
        return operator === "!=" ? (labels) => labels[key!] !== value : (labels) => labels[key!] === value;
      }
      const exists = /^(!?)([^\s!=(),]+)$/.exec(part);
      if (exists) {
        const [, not, key] = exists;
        return not ? (labels) => !Object.hasOwn(labels, key!) : (labels) => Object.hasOwn(labels, key!);
      }
      throw new Error(`unable to parse requirement: ${JSON.stringify(part)}`);
    });
}

// ---------------------------------------------------------------- storage and controllers

const clone = <T>(value: T): T => structuredClone(value);
const shortHash = (value: unknown, length = 10) =>
  createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, length);
const suffix = () => randomBytes(4).toString("hex").slice(0, 5);

interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: {
    containers?: { name: string; image?: string }[];
    initContainers?: { name: string; image?: string }[];
    [field: string]: unknown;
  };
}

class FakeCluster {
  /** By `group|kind|namespace|name`, in creation order. */
  private readonly store = new Map<string, StoredObject>();
  private resourceVersion = 1000;
  private clusterIp = 10;
  private lastPodCreation = 0;
  readonly failures = new Map<string, Failure>();

  constructor(readonly resources: Resource[]) {}

  all(kind?: string, namespace?: string): StoredObject[] {
    return [...this.store.values()]
      .filter((o) => (kind === undefined || o.kind === kind) && (namespace === undefined || o.metadata?.namespace === namespace))
      .map(clone);
  }

  list(resource: Resource, namespace: string | undefined, selector: string | undefined): Answer {
    let requirements: Requirement[];
    try {
      requirements = parseLabelSelector(selector ?? "");
    } catch (error) {
      return { status: 400, body: failureStatus(400, "BadRequest", (error as Error).message) };
    }
    const items = [...this.store.values()]
      .filter((o) => o.kind === resource.kind && groupOf(o) === resource.group)
      .filter((o) => namespace === undefined || o.metadata?.namespace === namespace)
      .filter((o) => requirements.every((matches) => matches(o.metadata?.labels ?? {})))
      // A typed list's items carry neither apiVersion nor kind.
      .map(({ apiVersion: _apiVersion, kind: _kind, ...item }) => clone(item));
    return {
      body: {
        kind: `${resource.kind}List`,
        apiVersion: apiVersionOf(resource),
        metadata: { resourceVersion: String(this.resourceVersion) },
        items,
      },
    };
  }

  get(resource: Resource, namespace: string, name: string): Answer {
    const object = this.store.get(keyOf(resource.group, resource.kind, namespace, name));
    return object ? { body: clone(object) } : this.notFound(resource, name);
  }

  apply(resource: Resource, namespace: string, name: string, request: RecordedRequest): Answer {
    const fieldManager = request.query.fieldManager;
    if (!fieldManager) {
      return { status: 400, body: failureStatus(400, "BadRequest", "PATCH, fieldManager is required for apply requests") };
    }
    const body = request.body as StoredObject | undefined;
    if (!body || typeof body !== "object") {
      return { status: 400, body: failureStatus(400, "BadRequest", "the body of an apply patch must be an object") };
    }
    if (body.apiVersion !== apiVersionOf(resource) || body.kind !== resource.kind) {
      return {
        status: 400,
        body: failureStatus(
          400,
          "BadRequest",
          `the API version in the data (${body.apiVersion}) and kind (${body.kind}) do not match the URL's ${apiVersionOf(resource)} ${resource.kind}`,
        ),
      };
    }
    if (body.metadata?.name !== name) {
      return {
        status: 400,
        body: failureStatus(
          400,
          "BadRequest",
          `the name of the object (${body.metadata?.name}) does not match the name on the URL (${name})`,
        ),
      };
    }
    if (body.metadata.namespace !== undefined && body.metadata.namespace !== namespace) {
      return {
        status: 400,
        body: failureStatus(
          400,
          "BadRequest",
          "the namespace of the provided object does not match the namespace sent on the request",
        ),
      };
    }
    const key = keyOf(resource.group, resource.kind, namespace, name);
    const existing = this.store.get(key);
    const now = new Date().toISOString();
    const object: StoredObject = clone(body);
    const { status: _ignored, ...withoutStatus } = object;
    const stored: StoredObject = {
      ...withoutStatus,
      metadata: {
        ...object.metadata,
        namespace,
        uid: existing?.metadata?.uid ?? randomUUID(),
        creationTimestamp: existing?.metadata?.creationTimestamp ?? now,
        resourceVersion: this.nextVersion(),
        managedFields: [
          { manager: fieldManager, operation: "Apply", apiVersion: body.apiVersion, time: now, fieldsType: "FieldsV1" },
        ],
      },
    };
    if (resource.hasStatus) {
      const previous = existing?.metadata?.generation ?? 0;
      const changed = !existing || JSON.stringify(existing.spec) !== JSON.stringify(stored.spec);
      stored.metadata!.generation = changed ? previous + 1 : previous;
      if (existing?.status) stored.status = clone(existing.status);
    }
    if (resource.kind === "Secret") secretStringData(stored);
    if (resource.kind === "Service") {
      const spec = (stored.spec ??= {});
      const clusterIP = (existing?.spec?.clusterIP as string | undefined) ?? (spec.clusterIP as string | undefined);
      spec.clusterIP = clusterIP ?? `10.96.0.${this.clusterIp++}`;
    }
    this.store.set(key, stored);
    this.reconcile();
    return { status: existing ? 200 : 201, body: clone(this.store.get(key)) };
  }

  delete(resource: Resource, namespace: string, name: string): Answer {
    const key = keyOf(resource.group, resource.kind, namespace, name);
    const object = this.store.get(key);
    if (!object) return this.notFound(resource, name);
    this.remove(key);
    this.reconcile();
    const details = {
      name,
      kind: resource.plural,
      uid: object.metadata?.uid,
      ...(resource.group ? { group: resource.group } : {}),
    };
    return { body: successStatus(details) };
  }

  /** Deletes an object, and what it owns (the garbage collector's background propagation, done at once). */
  private remove(key: string): void {
    const object = this.store.get(key);
    if (!object) return;
    this.store.delete(key);
    const uid = object.metadata?.uid;
    for (const [otherKey, other] of [...this.store]) {
      if (other.metadata?.ownerReferences?.some((owner) => owner.uid === uid)) this.remove(otherKey);
    }
  }

  private notFound(resource: Resource, name: string): Answer {
    const qualified = resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
    return {
      status: 404,
      body: notFoundStatus(`${qualified} "${name}" not found`, {
        name,
        kind: resource.plural,
        ...(resource.group ? { group: resource.group } : {}),
      }),
    };
  }

  private nextVersion(): string {
    this.resourceVersion += 1;
    return String(this.resourceVersion);
  }

  private put(object: StoredObject): void {
    object.metadata!.resourceVersion = this.nextVersion();
    this.store.set(keyOf(groupOf(object), object.kind!, object.metadata!.namespace!, object.metadata!.name!), object);
  }

  // ---- controllers: run to completion after every change (a rollout here takes no time)

  reconcile(): void {
    for (const object of [...this.store.values()]) {
      if (object.kind === "Deployment") this.reconcileDeployment(object);
      else if (object.kind === "StatefulSet") this.reconcileStatefulSet(object);
    }
    for (const pod of [...this.store.values()].filter((o) => o.kind === "Pod")) pod.status = this.podStatus(pod);
    for (const object of [...this.store.values()]) {
      if (object.kind === "ReplicaSet") this.replicaSetStatus(object);
      else if (object.kind === "Deployment") this.deploymentStatus(object);
      else if (object.kind === "StatefulSet") this.statefulSetStatus(object);
    }
  }

  private owned(owner: StoredObject, kind: string): StoredObject[] {
    return [...this.store.values()].filter(
      (o) => o.kind === kind && o.metadata?.ownerReferences?.some((reference) => reference.uid === owner.metadata?.uid),
    );
  }

  private reconcileDeployment(deployment: StoredObject): void {
    const spec = deployment.spec as { replicas?: number; selector?: unknown; template?: PodTemplate };
    const template = spec.template ?? {};
    const hash = shortHash(template);
    const name = `${deployment.metadata!.name}-${hash}`;
    const namespace = deployment.metadata!.namespace!;
    const replicas = spec.replicas ?? 1;
    let current = this.owned(deployment, "ReplicaSet").find((rs) => rs.metadata?.name === name);
    if (!current) {
      current = {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        metadata: {
          name,
          namespace,
          uid: randomUUID(),
          creationTimestamp: new Date().toISOString(),
          labels: { ...template.metadata?.labels, "pod-template-hash": hash },
          annotations: { "deployment.kubernetes.io/desired-replicas": String(replicas) },
          ownerReferences: [ownerReference(deployment)],
        },
        spec: { replicas, selector: clone(spec.selector), template: clone(template) },
      };
      this.put(current);
    }
    // The new ReplicaSet takes every replica; the old ones go to none (their pods stop).
    for (const rs of this.owned(deployment, "ReplicaSet")) {
      const wanted = rs === current ? replicas : 0;
      if ((rs.spec as { replicas?: number }).replicas !== wanted) {
        (rs.spec as { replicas?: number }).replicas = wanted;
        this.put(rs);
      }
      this.scalePods(rs, wanted, () => `${rs.metadata!.name}-${suffix()}`, {
        "pod-template-hash": rs.metadata!.labels!["pod-template-hash"]!,
      });
    }
  }

  private replicaSetStatus(rs: StoredObject): void {
    const pods = this.owned(rs, "Pod");
    const ready = pods.filter(podReady).length;
    rs.status = {
      replicas: pods.length,
      fullyLabeledReplicas: pods.length,
      ...(ready > 0 ? { readyReplicas: ready, availableReplicas: ready } : {}),
      observedGeneration: rs.metadata?.generation ?? 1,
    };
  }

  private deploymentStatus(deployment: StoredObject): void {
    const replicaSets = this.owned(deployment, "ReplicaSet");
    const hash = shortHash((deployment.spec as { template?: unknown }).template ?? {});
    const current = replicaSets.find((rs) => rs.metadata?.labels?.["pod-template-hash"] === hash);
    const pods = replicaSets.flatMap((rs) => this.owned(rs, "Pod"));
    const updated = current ? this.owned(current, "Pod") : [];
    const ready = pods.filter(podReady).length;
    const available = ready;
    const unavailable = pods.length - available;
    const wanted = (deployment.spec as { replicas?: number }).replicas ?? 1;
    const now = new Date().toISOString();
    // The API server leaves out counts that are zero.
    const counts = Object.fromEntries(
      Object.entries({
        replicas: pods.length,
        updatedReplicas: updated.length,
        readyReplicas: ready,
        availableReplicas: available,
        unavailableReplicas: unavailable,
      }).filter(([, count]) => count > 0),
    );
    deployment.status = {
      observedGeneration: deployment.metadata?.generation ?? 1,
      ...counts,
      conditions: [
        {
          type: "Available",
          status: available >= wanted ? "True" : "False",
          lastUpdateTime: now,
          lastTransitionTime: now,
          reason: available >= wanted ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
          message:
            available >= wanted ? "Deployment has minimum availability." : "Deployment does not have minimum availability.",
        },
        {
          type: "Progressing",
          status: "True",
          lastUpdateTime: now,
          lastTransitionTime: now,
          reason: ready === updated.length && ready >= wanted ? "NewReplicaSetAvailable" : "ReplicaSetUpdated",
          message: `ReplicaSet "${current?.metadata?.name}" ${ready >= wanted ? "has successfully progressed" : "is progressing"}.`,
        },
      ],
    };
  }

  private reconcileStatefulSet(statefulSet: StoredObject): void {
    const spec = statefulSet.spec as {
      replicas?: number;
      template?: PodTemplate;
      volumeClaimTemplates?: { metadata?: { name?: string; labels?: Record<string, string> }; spec?: unknown }[];
      selector?: { matchLabels?: Record<string, string> };
    };
    const name = statefulSet.metadata!.name!;
    const namespace = statefulSet.metadata!.namespace!;
    const replicas = spec.replicas ?? 1;
    const revision = `${name}-${shortHash(spec.template ?? {})}`;
    // A pod of an earlier template is replaced.
    for (const pod of this.owned(statefulSet, "Pod")) {
      if (pod.metadata?.labels?.["controller-revision-hash"] !== revision) this.remove(keyOfObject(pod));
    }
    // Claims are made once per ordinal and outlive the StatefulSet (the default retention policy).
    for (let ordinal = 0; ordinal < replicas; ordinal += 1) {
      for (const claimTemplate of spec.volumeClaimTemplates ?? []) {
        const claimName = `${claimTemplate.metadata?.name}-${name}-${ordinal}`;
        if (this.store.has(keyOf("", "PersistentVolumeClaim", namespace, claimName))) continue;
        this.put({
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: {
            name: claimName,
            namespace,
            uid: randomUUID(),
            creationTimestamp: new Date().toISOString(),
            labels: { ...claimTemplate.metadata?.labels, ...spec.selector?.matchLabels },
          },
          spec: clone(claimTemplate.spec) as Record<string, unknown>,
          status: { phase: "Bound" },
        });
      }
    }
    this.scalePods(statefulSet, replicas, (ordinal) => `${name}-${ordinal}`, { "controller-revision-hash": revision }, true);
  }

  private statefulSetStatus(statefulSet: StoredObject): void {
    const pods = this.owned(statefulSet, "Pod");
    const ready = pods.filter(podReady).length;
    const revision = `${statefulSet.metadata!.name}-${shortHash((statefulSet.spec as { template?: unknown }).template ?? {})}`;
    statefulSet.status = {
      observedGeneration: statefulSet.metadata?.generation ?? 1,
      replicas: pods.length,
      ...(ready > 0 ? { readyReplicas: ready, availableReplicas: ready } : {}),
      currentReplicas: pods.length,
      updatedReplicas: pods.length,
      currentRevision: revision,
      updateRevision: revision,
      collisionCount: 0,
    };
  }

  /** Brings the owner's pods to `count`: new ones from its template, the surplus deleted (highest ordinal first for a StatefulSet). */
  private scalePods(
    owner: StoredObject,
    count: number,
    nameOf: (ordinal: number) => string,
    extraLabels: Record<string, string>,
    ordinals = false,
  ): void {
    const template = ((owner.spec as { template?: PodTemplate }).template ?? {}) as PodTemplate;
    const pods = this.owned(owner, "Pod");
    const surplus = ordinals
      ? pods.filter((pod) => Number(pod.metadata!.name!.slice(owner.metadata!.name!.length + 1)) >= count)
      : pods.slice(count);
    for (const pod of surplus) this.remove(keyOfObject(pod));
    for (let ordinal = 0; ordinal < count; ordinal += 1) {
      const name = nameOf(ordinal);
      if (ordinals ? this.store.has(keyOf("", "Pod", owner.metadata!.namespace!, name)) : ordinal < pods.length) continue;
      const now = this.podCreationTime();
      this.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name,
          ...(ordinals ? {} : { generateName: `${owner.metadata!.name}-` }),
          namespace: owner.metadata!.namespace,
          uid: randomUUID(),
          creationTimestamp: now,
          labels: {
            ...template.metadata?.labels,
            ...extraLabels,
            ...(ordinals ? { "statefulset.kubernetes.io/pod-name": name } : {}),
          },
          ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
          ownerReferences: [ownerReference(owner)],
        },
        spec: { ...clone(template.spec ?? {}), nodeName: "fake-node-1" },
      });
    }
  }

  /** A pod's creation time, one millisecond after the previous pod's at least: pods' lines then differ in time, as on a cluster. */
  private podCreationTime(): string {
    this.lastPodCreation = Math.max(Date.now(), this.lastPodCreation + 1);
    return new Date(this.lastPodCreation).toISOString();
  }

  /** Running and ready, unless a container's image fails: then it waits with the failure's reason. */
  private podStatus(pod: StoredObject): Record<string, unknown> {
    const spec = pod.spec as PodTemplate["spec"];
    const startedAt = pod.metadata?.creationTimestamp;
    const failureOf = (image: string | undefined) => (image === undefined ? undefined : this.failures.get(image));
    const waiting = (container: { name: string; image?: string }, failure: Failure) => ({
      name: container.name,
      image: container.image,
      imageID: "",
      ready: false,
      started: false,
      restartCount: failure.reason === "CrashLoopBackOff" ? 3 : 0,
      state: { waiting: { reason: failure.reason, message: failure.message } },
    });
    const initFailure = (spec?.initContainers ?? []).find((c) => failureOf(c.image));
    const initContainerStatuses = (spec?.initContainers ?? []).map((container) => {
      const failure = failureOf(container.image);
      if (failure) return waiting(container, failure);
      return {
        name: container.name,
        image: container.image,
        imageID: `${container.image}@sha256:${shortHash(container.image, 64)}`,
        ready: true,
        started: false,
        restartCount: 0,
        state: { terminated: { exitCode: 0, reason: "Completed", startedAt, finishedAt: startedAt } },
      };
    });
    const containerStatuses = (spec?.containers ?? []).map((container) => {
      const failure = failureOf(container.image);
      if (failure) return waiting(container, failure);
      if (initFailure) return waiting(container, { reason: "PodInitializing", message: "" });
      return {
        name: container.name,
        image: container.image,
        imageID: `${container.image}@sha256:${shortHash(container.image, 64)}`,
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt } },
      };
    });
    const ready = containerStatuses.every((status) => status.ready);
    const condition = (type: string, ok: boolean) => ({
      type,
      status: ok ? "True" : "False",
      lastProbeTime: null,
      lastTransitionTime: startedAt,
      ...(ok ? {} : { reason: type === "Initialized" ? "ContainersNotInitialized" : "ContainersNotReady" }),
    });
    return {
      phase: ready ? "Running" : "Pending",
      conditions: [
        condition("Initialized", !initFailure),
        condition("Ready", ready),
        condition("ContainersReady", ready),
        condition("PodScheduled", true),
      ],
      hostIP: "10.0.0.11",
      podIP: `10.244.0.${(Number.parseInt(shortHash(pod.metadata?.name, 2), 16) % 250) + 2}`,
      startTime: startedAt,
      ...(initContainerStatuses.length > 0 ? { initContainerStatuses } : {}),
      containerStatuses,
      qosClass: "Burstable",
    };
  }
}

function groupOf(object: StoredObject): string {
  return object.apiVersion?.includes("/") ? object.apiVersion.split("/")[0]! : "";
}

function apiVersionOf(resource: Resource): string {
  return resource.group ? `${resource.group}/${resource.version}` : resource.version;
}

function keyOf(group: string, kind: string, namespace: string, name: string): string {
  return `${group}|${kind}|${namespace}|${name}`;
}

function keyOfObject(object: StoredObject): string {
  return keyOf(groupOf(object), object.kind!, object.metadata!.namespace!, object.metadata!.name!);
}

function ownerReference(owner: StoredObject) {
  return {
    apiVersion: owner.apiVersion!,
    kind: owner.kind!,
    name: owner.metadata!.name!,
    uid: owner.metadata!.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

function podReady(pod: StoredObject): boolean {
  const conditions = (pod.status?.conditions ?? []) as { type: string; status: string }[];
  return conditions.some((condition) => condition.type === "Ready" && condition.status === "True");
}

/** As the API server stores a Secret: stringData merged into data (base64), stringData dropped. */
function secretStringData(secret: StoredObject): void {
  const stringData = secret.stringData as Record<string, string> | undefined;
  if (!stringData) return;
  const data = { ...(secret.data as Record<string, string> | undefined) };
  for (const [key, value] of Object.entries(stringData)) data[key] = Buffer.from(value, "utf8").toString("base64");
  secret.data = data;
  delete secret.stringData;
}
