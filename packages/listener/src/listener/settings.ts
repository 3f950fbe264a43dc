import { envBoolean, envNumber, envOneOf } from "@berth/service-kit";
import { readFileSync } from "node:fs";
import { type ClusterNetworkSettings, DEFAULT_NETWORK_SETTINGS } from "../compute/cluster/cluster-revision.js";
import { FORCE_UNAVAILABLE } from "../sandbox/probe.js";
import type { EngineOptions } from "../engine/docker-engine.js";
import type { AutoscaleSettings } from "./autoscaler.js";

/*
 * The environment variables a listener reads, in one place. Each group is
 * read where it applies (a cluster's settings by a cluster listener), so a
 * bad value of a setting a listener does not use stops nothing. DOCKER_HOST,
 * Docker's own convention, is the engine client's default (engine/docker-engine.ts).
 */

type Env = NodeJS.ProcessEnv;

/** One listener setting, for the docs' configuration tables. */
export interface ListenerSetting {
  name: string;
  /** As the docs say it; empty: unset. */
  default: string;
  description: string;
}

/** The listener's environment variables (the docs check compares them with README.md's tables). */
export const LISTENER_SETTINGS: readonly ListenerSetting[] = [
  { name: "BERTH_CONTROL_PLANE_URL", default: "", description: "`berth listener --control-plane`: the control plane's URL." },
  { name: "BERTH_LISTENER_API_KEY", default: "", description: "`berth listener --api-key`: the listener's API key." },
  {
    name: "BERTH_LISTENER_COMPUTE",
    default: "the listener's compute_type",
    description: "`--compute`: local, docker or cluster: where revisions run.",
  },
  {
    name: "BERTH_CONTAINER_ENGINE",
    default: "DOCKER_HOST, else the standard socket",
    description: "`--engine`: the Docker Engine API of a docker listener, and the one a cluster listener builds on.",
  },
  {
    name: "DOCKER_HOST",
    default: "unix:///var/run/docker.sock",
    description: "The Docker Engine API when BERTH_CONTAINER_ENGINE names none.",
  },
  {
    name: "BERTH_CONTAINER_FIREWALL",
    default: "iptables when it can",
    description: "iptables: the host firewall rules of containers' networks are required; off: none are installed.",
  },
  {
    name: "BERTH_NODE_BASE_IMAGE",
    default: "berth/node-base:<node major>",
    description: "The base of every image a docker or cluster listener builds.",
  },
  {
    name: "BERTH_CONTAINER_BIND_ALLOW",
    default: "",
    description: "Comma-separated host folders under which hostPath volumes of containers may bind.",
  },
  {
    name: "BERTH_ROUTER_PUBLIC_URL",
    default: "the router's address",
    description: "`--router-public-url`: base of deployment URLs when clients reach the router another way.",
  },
  {
    name: "BERTH_TRUST_ALL_CODE",
    default: "off",
    description: "`--trust-all-code`: without a sandbox, run every workspace's code anyway.",
  },
  {
    name: "BERTH_SANDBOX_EGRESS_ALLOW",
    default: "",
    description: "Destinations sandboxed builds and servers may reach besides the internet.",
  },
  {
    name: "BERTH_LISTENER_SECRETS_FILE",
    default: "",
    description: "A JSON file of the operator's secrets (secret_references, image_pull_secrets, the registry login).",
  },
  {
    name: "BERTH_AUTOSCALE_INTERVAL_SECONDS",
    default: "5",
    description: "How often a docker listener reads each deployment's load.",
  },
  {
    name: "BERTH_AUTOSCALE_TARGET_REQUESTS",
    default: "10",
    description: "Requests in flight one container replica is sized for.",
  },
  {
    name: "BERTH_AUTOSCALE_SCALE_DOWN_SECONDS",
    default: "60",
    description: "How long the load must stay low before one replica (or worker) is removed.",
  },
  {
    name: "BERTH_METRICS_INTERVAL_SECONDS",
    default: "15",
    description: "How often a listener reads its deployments' agent servers' /metrics and sends the control plane the samples.",
  },
  {
    name: "BERTH_REPO_POLL_SECONDS",
    default: "0",
    description: "How often the heads of build_on_push deployments' branches are polled (0: never).",
  },
  {
    name: "KUBECONFIG",
    default: "the in-cluster config",
    description: "`--kubeconfig`: the cluster a cluster listener deploys to.",
  },
  {
    name: "BERTH_CLUSTER_NAMESPACE",
    default: "default",
    description: "`--cluster-namespace`: where deployments without listener_config.cluster_namespace go.",
  },
  { name: "BERTH_CLUSTER_KEDA", default: "off", description: "`--keda`: the cluster has KEDA." },
  {
    name: "BERTH_CLUSTER_ROLLOUT_SECONDS",
    default: "600",
    description: "How long a cluster rollout may take before the revision fails.",
  },
  {
    name: "BERTH_CLUSTER_SERVICES_IMAGE",
    default: "the scale-out services image",
    description: "The image of the deployments' PostgreSQL and Redis on a cluster.",
  },
  {
    name: "BERTH_CLUSTER_IMAGE_REGISTRY",
    default: "",
    description: "`--image-registry`: where a cluster listener pushes the images it builds.",
  },
  {
    name: "BERTH_CLUSTER_LOG_SECONDS",
    default: "5",
    description: "How often a cluster listener reads its deployments' pod logs.",
  },
  {
    name: "BERTH_CLUSTER_PLATFORM_NAMESPACE",
    default: "the listener pod's namespace, else berth",
    description: "The platform's namespace, which the deployments' NetworkPolicy lets in.",
  },
  {
    name: "BERTH_CLUSTER_INGRESS_NAMESPACES",
    default: "",
    description: "Comma-separated namespaces of ingress controllers the NetworkPolicy lets in.",
  },
  { name: "BERTH_CLUSTER_KEDA_NAMESPACE", default: "keda", description: "KEDA's namespace, let in to PostgreSQL." },
  {
    name: "BERTH_CLUSTER_BLOCKED_CIDRS",
    default: "",
    description: "Comma-separated CIDRs the deployments may not reach besides the private ranges.",
  },
];

/** What `berth listener` reads besides its flags. */
export interface CommandSettings {
  controlPlaneUrl?: string;
  apiKey?: string;
  /** undefined: the listener's record says (its compute_type). */
  compute?: "local" | "docker" | "cluster";
  containerEngine?: string;
  containerBindAllow: string[];
  routerPublicUrl?: string;
  trustAllCode: boolean;
  sandboxEgressAllow?: string;
  secretsFile?: string;
  kubeconfig?: string;
}

export function commandSettings(env: Env = process.env): CommandSettings {
  return {
    controlPlaneUrl: env.BERTH_CONTROL_PLANE_URL,
    apiKey: env.BERTH_LISTENER_API_KEY,
    compute: env.BERTH_LISTENER_COMPUTE
      ? envOneOf("BERTH_LISTENER_COMPUTE", ["local", "docker", "cluster"] as const, "local", env)
      : undefined,
    containerEngine: env.BERTH_CONTAINER_ENGINE || undefined,
    containerBindAllow: list(env.BERTH_CONTAINER_BIND_ALLOW),
    routerPublicUrl: env.BERTH_ROUTER_PUBLIC_URL,
    trustAllCode: envBoolean("BERTH_TRUST_ALL_CODE", false, env),
    sandboxEgressAllow: env.BERTH_SANDBOX_EGRESS_ALLOW || undefined,
    secretsFile: env.BERTH_LISTENER_SECRETS_FILE || undefined,
    kubeconfig: env.KUBECONFIG || undefined,
  };
}

/** How a docker or cluster listener uses its container engine. */
export function engineSettings(env: Env = process.env): EngineOptions {
  return { firewall: env.BERTH_CONTAINER_FIREWALL?.trim() ?? "", baseImage: env.BERTH_NODE_BASE_IMAGE?.trim() || undefined };
}

/** A cluster listener's settings from the environment (docs/cluster.md); the command's flags go over them. */
export interface ClusterEnvSettings {
  namespace: string;
  keda: boolean;
  rolloutTimeoutMs: number;
  servicesImage?: string;
  imageRegistry?: string;
}

export function clusterSettings(env: Env = process.env): ClusterEnvSettings {
  return {
    namespace: env.BERTH_CLUSTER_NAMESPACE ?? "default",
    keda: envBoolean("BERTH_CLUSTER_KEDA", false, env),
    rolloutTimeoutMs: envNumber("BERTH_CLUSTER_ROLLOUT_SECONDS", 600, { min: 1 }, env) * 1000,
    servicesImage: env.BERTH_CLUSTER_SERVICES_IMAGE || undefined,
    // Where built sources' images are pushed for the cluster to pull (docs/cluster.md).
    imageRegistry: env.BERTH_CLUSTER_IMAGE_REGISTRY || undefined,
  };
}

/** BERTH_CLUSTER_LOG_SECONDS: how often a cluster listener reads its deployments' pod logs into their deploy logs. */
export function clusterLogPollMs(env: Env = process.env): number {
  return envNumber("BERTH_CLUSTER_LOG_SECONDS", 5, { min: 0.1 }, env) * 1000;
}

/**
 * The NetworkPolicy settings (docs/cluster.md#network-policy):
 * BERTH_CLUSTER_PLATFORM_NAMESPACE (else the namespace of the listener's pod,
 * else `berth`), BERTH_CLUSTER_INGRESS_NAMESPACES, BERTH_CLUSTER_KEDA_NAMESPACE
 * (`keda`) and BERTH_CLUSTER_BLOCKED_CIDRS (comma-separated).
 */
export function clusterNetworkFromEnv(env: Env = process.env): ClusterNetworkSettings {
  const blockedCidrs = list(env.BERTH_CLUSTER_BLOCKED_CIDRS);
  for (const cidr of blockedCidrs)
    if (!/^(\d+\.\d+\.\d+\.\d+\/\d{1,2}|[0-9a-f:]+\/\d{1,3})$/i.test(cidr))
      throw new Error(`BERTH_CLUSTER_BLOCKED_CIDRS: ${cidr} is not a CIDR (10.96.0.0/12, fd00::/8)`);
  let podNamespace: string | undefined;
  try {
    podNamespace = readFileSync("/var/run/secrets/kubernetes.io/serviceaccount/namespace", "utf8").trim() || undefined;
  } catch {
    // Not in a pod.
  }
  return {
    platformNamespace: env.BERTH_CLUSTER_PLATFORM_NAMESPACE || podNamespace || DEFAULT_NETWORK_SETTINGS.platformNamespace,
    ingressNamespaces: list(env.BERTH_CLUSTER_INGRESS_NAMESPACES),
    kedaNamespace: env.BERTH_CLUSTER_KEDA_NAMESPACE || DEFAULT_NETWORK_SETTINGS.kedaNamespace,
    blockedCidrs,
  };
}

export function autoscaleSettings(env: Env = process.env): AutoscaleSettings {
  return {
    intervalMs: envNumber("BERTH_AUTOSCALE_INTERVAL_SECONDS", 5, { min: 0.1 }, env) * 1000,
    targetOpenRequests: envNumber("BERTH_AUTOSCALE_TARGET_REQUESTS", 10, { min: 1, integer: true }, env),
    scaleDownAfterMs: envNumber("BERTH_AUTOSCALE_SCALE_DOWN_SECONDS", 60, { min: 0 }, env) * 1000,
  };
}

/** BERTH_METRICS_INTERVAL_SECONDS: how often the deployments' servers' metrics are read and sent to the control plane. */
export function metricsIntervalMs(env: Env = process.env): number {
  return envNumber("BERTH_METRICS_INTERVAL_SECONDS", 15, { min: 0.5 }, env) * 1000;
}

/**
 * BERTH_IDLE_SECONDS: how long a deployment on local compute (not prod)
 * goes without a request before its agent server stops (it starts again on
 * the next one); 0 turns sleeping off.
 */
export function idleSleepMs(env: Env = process.env): number {
  return envNumber("BERTH_IDLE_SECONDS", 900, { min: 0 }, env) * 1000;
}

/** BERTH_REPO_POLL_SECONDS: how often tracked branches are polled; 0 (the default) leaves it to push webhooks. */
export function branchPollMs(env: Env = process.env): number {
  return envNumber("BERTH_REPO_POLL_SECONDS", 0, { min: 0 }, env) * 1000;
}

/** For tests only (BERTH_TEST_SANDBOX_UNAVAILABLE=1): the listener finds no sandbox, on a machine that has one. */
export function sandboxForcedUnavailable(env: Env = process.env): boolean {
  return envBoolean(FORCE_UNAVAILABLE, false, env);
}

function list(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}
