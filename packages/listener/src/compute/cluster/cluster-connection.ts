import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { AppsV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi } from "@kubernetes/client-node";

/** A Kubernetes API server and the clients Berth talks to it with. */
export interface ClusterConnection {
  readonly kubeConfig: KubeConfig;
  /** Any kind by apiVersion and kind (server-side apply, listing and deleting by label); caches API discovery. */
  readonly objects: KubernetesObjectApi;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  /** Where the credentials came from, for logs and error messages. */
  readonly source: "in-cluster" | "kubeconfig";
}

export interface ConnectClusterOptions {
  /** A kubeconfig file; else KUBECONFIG (which may list several files), else ~/.kube/config. */
  kubeconfig?: string;
  /** A context of the kubeconfig instead of its current-context. */
  context?: string;
  /** Tests only: read the service account from <prefix>/var/run/secrets/... instead of /var/run/secrets/... */
  inClusterPathPrefix?: string;
}

/**
 * Credentials of the pod Berth runs in when nothing names a kubeconfig
 * (KUBERNETES_SERVICE_HOST is set in every pod); else the kubeconfig file.
 * Naming a context also means a kubeconfig: a pod's service account has none.
 */
export function connectCluster(options: ConnectClusterOptions): ClusterConnection {
  const kubeConfig = new KubeConfig();
  const kubeconfigEnv = process.env.KUBECONFIG;
  const namesKubeconfig = Boolean(options.kubeconfig || kubeconfigEnv || options.context);
  let source: ClusterConnection["source"] = "kubeconfig";
  if (!namesKubeconfig && process.env.KUBERNETES_SERVICE_HOST) {
    kubeConfig.loadFromCluster(options.inClusterPathPrefix);
    source = "in-cluster";
  } else if (options.kubeconfig) {
    kubeConfig.loadFromFile(options.kubeconfig);
  } else if (kubeconfigEnv) {
    // loadFromDefault merges every file KUBECONFIG lists, as kubectl does.
    kubeConfig.loadFromDefault();
  } else {
    const file = join(homedir(), ".kube", "config");
    // loadFromDefault would silently fall back to http://localhost:8080: say what is missing instead.
    if (!existsSync(file)) {
      throw new Error(
        `No Kubernetes credentials: ${file} does not exist, KUBECONFIG is not set and Berth is not running in a pod`,
      );
    }
    kubeConfig.loadFromFile(file);
  }
  if (options.context) {
    if (!kubeConfig.getContextObject(options.context)) {
      const known = kubeConfig.getContexts().map((context) => context.name);
      throw new Error(`The kubeconfig has no context "${options.context}" (it has: ${known.join(", ") || "none"})`);
    }
    kubeConfig.setCurrentContext(options.context);
  }
  if (!kubeConfig.getCurrentCluster()) {
    throw new Error(`The kubeconfig's current context "${kubeConfig.getCurrentContext()}" names no cluster`);
  }
  return {
    kubeConfig,
    objects: KubernetesObjectApi.makeApiClient(kubeConfig),
    core: kubeConfig.makeApiClient(CoreV1Api),
    apps: kubeConfig.makeApiClient(AppsV1Api),
    source,
  };
}
