import type { V1Container, V1Deployment, V1PodTemplateSpec, V1Probe, V1Service, V1Volume } from "@kubernetes/client-node";
import { DATA_VOLUME, NOBODY, type PodExtras, serverSecurity, TMP_VOLUME } from "./render-companions.js";
import { metadataOf, podMetadataOf, selectorOf } from "./render-labels.js";
import { serverEnvOf } from "./render-secrets.js";
import { type RenderContext, resourcesOf } from "./render-spec.js";

/*
 * The servers of a revision: the API Deployment and its Service, and the
 * worker ("queue") Deployment. Both run the revision's image, which serves
 * GET /ok on port 8000 in either role.
 */

export const SERVER_PORT = 8000;
/** The docker listener's grace period: the server finishes open responses and runs, or hands them back to the queue. */
const GRACE_SECONDS = 30;

type ServerComponent = "api" | "queue";

export function renderServerDeployment(context: RenderContext, extras: PodExtras, component: ServerComponent): V1Deployment {
  const replicas = component === "api" ? context.spec.apiReplicas : context.spec.queueReplicas;
  const name = component === "api" ? context.names.api : context.names.queue;
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      ...metadataOf(context, component, name),
      annotations: {
        ...context.annotations,
        "berth.dev/revision-number": String(context.input.revisionNumber),
      },
    },
    spec: {
      // An autoscaler owns the count when there is one: a count here would reset it at every apply.
      ...(replicas.autoscaled ? {} : { replicas: replicas.min }),
      selector: { matchLabels: selectorOf(context, component) },
      // The old pods serve until the new ones answer /ok.
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      revisionHistoryLimit: 5,
      template: podTemplateOf(context, extras, component),
    },
  };
}

/** The API pods' ClusterIP Service: what the router (or the user's ingress) sends requests to. */
export function renderApiService(context: RenderContext): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: metadataOf(context, "api", context.names.api),
    spec: {
      type: "ClusterIP",
      selector: selectorOf(context, "api"),
      ports: [{ name: "http", port: SERVER_PORT, targetPort: "http", protocol: "TCP" }],
    },
  };
}

function podTemplateOf(context: RenderContext, extras: PodExtras, component: ServerComponent): V1PodTemplateSpec {
  const { berthImage } = context.input;
  const volumes: V1Volume[] = [
    ...(berthImage ? [{ name: TMP_VOLUME, emptyDir: { sizeLimit: "512Mi" } }] : []),
    { name: DATA_VOLUME, emptyDir: {} },
    ...extras.volumes,
  ];
  return {
    metadata: podMetadataOf(context, component, true),
    spec: {
      ...(extras.serviceAccountName !== null
        ? { serviceAccountName: extras.serviceAccountName }
        : // Graph code has no business with the cluster's API unless the deployment names an account for it.
          { automountServiceAccountToken: false }),
      ...(extras.imagePullSecrets.length > 0 ? { imagePullSecrets: extras.imagePullSecrets } : {}),
      // No variables describing the namespace's other Services: they could collide with the deployment's own.
      enableServiceLinks: false,
      terminationGracePeriodSeconds: GRACE_SECONDS,
      securityContext: {
        seccompProfile: { type: "RuntimeDefault" },
        // The group owns the volumes (claims included), so nobody can write them.
        ...(berthImage ? { fsGroup: NOBODY } : {}),
      },
      ...(extras.initContainers.length > 0 ? { initContainers: structuredClone(extras.initContainers) } : {}),
      containers: [serverContainerOf(context, extras, component), ...structuredClone(extras.sidecars)],
      volumes: structuredClone(volumes),
    },
  };
}

function serverContainerOf(context: RenderContext, extras: PodExtras, component: ServerComponent): V1Container {
  const { input, spec, names } = context;
  const resources = resourcesOf(component === "api" ? spec.api : spec.queue, context.serverDefaults);
  const probe = (periodSeconds: number, failureThreshold: number): V1Probe => ({
    httpGet: { path: "/ok", port: "http" },
    periodSeconds,
    failureThreshold,
    timeoutSeconds: 5,
  });
  return {
    name: component,
    image: input.image,
    // Berth's revision images are tagged per build; an external tag may move, and each deploy must see where it points.
    imagePullPolicy: input.berthImage ? "IfNotPresent" : "Always",
    ports: [{ name: "http", containerPort: SERVER_PORT, protocol: "TCP" }],
    env: serverEnvOf(context, component === "api" ? "api" : "worker"),
    envFrom: [{ secretRef: { name: names.env } }],
    resources,
    // Migrations run at start: a slow first start is not a dead server.
    startupProbe: probe(2, 90),
    readinessProbe: probe(5, 3),
    livenessProbe: probe(10, 6),
    securityContext: serverSecurity(input.berthImage),
    volumeMounts: [
      ...(input.berthImage ? [{ name: TMP_VOLUME, mountPath: "/tmp" }] : []),
      { name: DATA_VOLUME, mountPath: "/data" },
      ...structuredClone(extras.volumeMounts),
    ],
  };
}
