import type { V1NetworkPolicy, V1NetworkPolicyEgressRule, V1NetworkPolicyPeer } from "@kubernetes/client-node";
import { NON_PUBLIC_IPV4_RANGES, NON_PUBLIC_IPV6_RANGES } from "@berth/listener-protocol";
import { DEFAULT_NETWORK_SETTINGS, LABEL_DEPLOYMENT } from "./cluster-revision.js";
import { labelValue, metadataOf } from "./render-labels.js";
import { SERVER_PORT } from "./render-pods.js";
import type { RenderContext } from "./render-spec.js";

/*
 * The deployment's NetworkPolicy: its pods take requests only from the
 * platform (and the ingress in front of it) and from each other, and reach
 * each other, DNS, the control plane's tracing and Auth Service, and the
 * internet, but no private range (the cluster's pods and services, the
 * nodes, the cloud's metadata service) other than those.
 */

const POSTGRES_PORT = 5432;
const namespaceNamed = (name: string): V1NetworkPolicyPeer => ({
  namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": name } },
});

export function renderNetworkPolicy(context: RenderContext): V1NetworkPolicy {
  const { input } = context;
  const settings = input.network ?? DEFAULT_NETWORK_SETTINGS;
  const ownPods: V1NetworkPolicyPeer = { podSelector: { matchLabels: { [LABEL_DEPLOYMENT]: labelValue(input.deploymentId) } } };
  const tcp = (port: number) => ({ protocol: "TCP", port });
  const blocked4 = [...NON_PUBLIC_IPV4_RANGES, ...settings.blockedCidrs.filter((cidr) => !cidr.includes(":"))];
  const blocked6 = [...NON_PUBLIC_IPV6_RANGES, ...settings.blockedCidrs.filter((cidr) => cidr.includes(":"))];
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: metadataOf(context, "api", context.names.api),
    spec: {
      podSelector: { matchLabels: ownPods.podSelector!.matchLabels! },
      policyTypes: ["Ingress", "Egress"],
      ingress: [
        // The servers from each other; the database and cache from the servers.
        { _from: [ownPods] },
        // The router (in the platform's namespace) and the ingress in front of the deployment, to the servers' port only.
        {
          _from: [settings.platformNamespace, ...settings.ingressNamespaces].map(namespaceNamed),
          ports: [tcp(SERVER_PORT)],
        },
        // KEDA's PostgreSQL scaler counts the runs in flight in the deployment's database.
        ...(input.keda && input.externalDatabaseUrl === undefined
          ? [{ _from: [namespaceNamed(settings.kedaNamespace)], ports: [tcp(POSTGRES_PORT)] }]
          : []),
      ],
      egress: [
        { to: [ownPods] },
        // The cluster's DNS (kube-dns or CoreDNS, labelled k8s-app=kube-dns in any namespace).
        {
          to: [{ namespaceSelector: {}, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }],
          ports: [
            { protocol: "UDP", port: 53 },
            { protocol: "TCP", port: 53 },
          ],
        },
        ...controlPlaneEgress(input.env, settings.platformNamespace),
        // The internet: every address but the private ranges (the cluster's pod and service CIDRs among them).
        {
          to: [{ ipBlock: { cidr: "0.0.0.0/0", except: blocked4 } }, { ipBlock: { cidr: "::/0", except: blocked6 } }],
        },
      ],
    },
  } as V1NetworkPolicy;
}

/**
 * The control plane's tracing API and Auth Service (LANGSMITH_ENDPOINT and
 * BERTH_AUTH_SERVICE_URL): in the cluster (`<service>.<namespace>.svc`), its
 * namespace's pods on the URL's port (the Service's port, which must be its
 * pods' as in deploy/kubernetes); at an IP address, that address and port.
 * A public host name needs nothing: the internet is reachable.
 */
function controlPlaneEgress(env: Record<string, string>, platformNamespace: string): V1NetworkPolicyEgressRule[] {
  const rules = new Map<string, V1NetworkPolicyEgressRule>();
  for (const value of [env.LANGSMITH_ENDPOINT, env.BERTH_AUTH_SERVICE_URL]) {
    let url: URL;
    try {
      url = new URL(value ?? "");
    } catch {
      continue;
    }
    const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const inCluster = /^[a-z0-9-]+\.([a-z0-9-]+)\.svc(\.cluster\.local)?$/.exec(host);
    const ipv4 = /^\d+\.\d+\.\d+\.\d+$/.test(host);
    const peer: V1NetworkPolicyPeer | undefined = inCluster
      ? namespaceNamed(inCluster[1] ?? platformNamespace)
      : ipv4 || host.includes(":")
        ? { ipBlock: { cidr: `${host}/${ipv4 ? 32 : 128}` } }
        : undefined;
    if (peer) rules.set(`${JSON.stringify(peer)}:${port}`, { to: [peer], ports: [{ protocol: "TCP", port }] });
  }
  return [...rules.values()];
}
