import type {
  V1Container,
  V1Deployment,
  V1PodSecurityContext,
  V1PodTemplateSpec,
  V1Service,
  V1StatefulSet,
} from "@kubernetes/client-node";
import { LABEL_MANAGED_BY, MANAGED_BY_BERTH, SERVICES_IMAGE } from "./cluster-revision.js";
import { companionSecurity } from "./render-companions.js";
import { metadataOf, podMetadataOf, selectorOf } from "./render-labels.js";
import { CREDENTIAL_KEYS } from "./render-secrets.js";
import { CACHE_DEFAULTS, DB_DEFAULTS, effectiveSizing, type RenderContext, resourcesOf } from "./render-spec.js";

/*
 * The deployment's own PostgreSQL (a StatefulSet with its claim, kept across
 * revisions) and Redis (a cache and broker only: it persists nothing), from
 * the image the docker listener runs them from, with the same entry points.
 */

/** Where berth-postgres keeps its cluster (the claim is mounted there). */
export const POSTGRES_DATA = "/var/lib/berth-postgres";
const POSTGRES_PORT = 5432;
const REDIS_PORT = 6379;

export function renderDatabase(context: RenderContext): [V1Service, V1StatefulSet] {
  const { names, spec } = context;
  const resources = resourcesOf(spec.db, DB_DEFAULTS);
  const container: V1Container = {
    name: "postgres",
    image: servicesImageOf(context),
    command: ["/usr/local/bin/berth-postgres"],
    ports: [{ name: "postgres", containerPort: POSTGRES_PORT, protocol: "TCP" }],
    env: [
      { name: "POSTGRES_PASSWORD", valueFrom: { secretKeyRef: { name: names.credentials, key: CREDENTIAL_KEYS.dbPassword } } },
      { name: "POSTGRES_MAX_CONNECTIONS", value: String(spec.dbMaxConnections) },
    ],
    resources,
    readinessProbe: {
      exec: { command: ["sh", "-c", 'exec "$(echo /usr/lib/postgresql/*/bin)/pg_isready" -q -h 127.0.0.1'] },
      periodSeconds: 5,
      timeoutSeconds: 5,
    },
    livenessProbe: { tcpSocket: { port: "postgres" }, periodSeconds: 10, failureThreshold: 6 },
    securityContext: companionSecurity(),
    volumeMounts: [
      { name: "data", mountPath: POSTGRES_DATA },
      // Its Unix socket and initdb's password file.
      { name: "tmp", mountPath: "/tmp" },
    ],
  };
  const service: V1Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: metadataOf(context, "db", names.db),
    spec: {
      // Headless: the StatefulSet's governing Service, its name resolving to the one pod.
      clusterIP: "None",
      selector: selectorOf(context, "db"),
      ports: [{ name: "postgres", port: POSTGRES_PORT, targetPort: "postgres", protocol: "TCP" }],
    },
  };
  const statefulSet: V1StatefulSet = {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: metadataOf(context, "db", names.db),
    spec: {
      replicas: 1,
      serviceName: names.db,
      selector: { matchLabels: selectorOf(context, "db") },
      template: servicesPodOf(context, "db", container, context.input.servicesUsers?.db),
      volumeClaimTemplates: [
        {
          // Claim templates cannot change once the StatefulSet exists: only labels no revision changes.
          metadata: { name: "data", labels: { [LABEL_MANAGED_BY]: MANAGED_BY_BERTH, ...selectorOf(context, "db") } },
          spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: `${spec.dbStorageGi}Gi` } } },
        },
      ],
    },
  };
  return [service, statefulSet];
}

export function renderCache(context: RenderContext): [V1Service, V1Deployment] {
  const { names, spec } = context;
  const resources = resourcesOf(spec.cache, CACHE_DEFAULTS);
  const limitMb = effectiveSizing(spec.cache, CACHE_DEFAULTS).memoryLimitMb;
  const container: V1Container = {
    name: "redis",
    image: servicesImageOf(context),
    command: ["/usr/local/bin/berth-redis"],
    ports: [{ name: "redis", containerPort: REDIS_PORT, protocol: "TCP" }],
    env: [
      { name: "REDIS_PASSWORD", valueFrom: { secretKeyRef: { name: names.credentials, key: CREDENTIAL_KEYS.cachePassword } } },
      // Redis evicts before the kernel kills it, as on the docker listener.
      { name: "REDIS_MAXMEMORY", value: `${Math.floor(limitMb * 0.9)}mb` },
    ],
    resources,
    readinessProbe: {
      exec: { command: ["sh", "-c", 'redis-cli --no-auth-warning -a "$REDIS_PASSWORD" ping | grep -q PONG'] },
      periodSeconds: 5,
      timeoutSeconds: 5,
    },
    livenessProbe: { tcpSocket: { port: "redis" }, periodSeconds: 10, failureThreshold: 6 },
    securityContext: companionSecurity(),
  };
  const service: V1Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: metadataOf(context, "cache", names.cache),
    spec: {
      type: "ClusterIP",
      selector: selectorOf(context, "cache"),
      ports: [{ name: "redis", port: REDIS_PORT, targetPort: "redis", protocol: "TCP" }],
    },
  };
  const deployment: V1Deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: metadataOf(context, "cache", names.cache),
    spec: {
      replicas: 1,
      // One Redis at a time: two would split the brokers' clients between them.
      strategy: { type: "Recreate" },
      selector: { matchLabels: selectorOf(context, "cache") },
      template: servicesPodOf(context, "cache", container, context.input.servicesUsers?.cache),
    },
  };
  return [service, deployment];
}

function servicesImageOf(context: RenderContext): string {
  return context.input.servicesImage ?? SERVICES_IMAGE;
}

/** A data pod: no revision label (a new revision must not restart it), no service account token, no service links. */
function servicesPodOf(
  context: RenderContext,
  component: "db" | "cache",
  container: V1Container,
  user: number | undefined,
): V1PodTemplateSpec {
  const securityContext: V1PodSecurityContext = {
    seccompProfile: { type: "RuntimeDefault" },
    // The claim's files belong to the server's group; the image's own user when no id is known.
    ...(user !== undefined ? { runAsNonRoot: true, runAsUser: user, runAsGroup: user, fsGroup: user } : {}),
  };
  return {
    metadata: podMetadataOf(context, component, false),
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext,
      containers: [container],
      ...(component === "db" ? { volumes: [{ name: "tmp", emptyDir: { sizeLimit: "64Mi" } }] } : {}),
    },
  };
}
