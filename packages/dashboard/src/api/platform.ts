import type { Deployment } from "./types";

/**
 * The platform's routers, as the control plane names them (`GET dashboard.json`, the list its
 * Content-Security-Policy allows): the only servers other than the control plane the page sends a key to.
 */
export async function loadRouterUrls(): Promise<string[]> {
  const response = await fetch(new URL("dashboard.json", document.baseURI));
  if (!response.ok) throw new Error(`The control plane answered ${response.status} for dashboard.json`);
  const { router_urls } = (await response.json()) as { router_urls?: unknown };
  return Array.isArray(router_urls) ? router_urls.filter((url): url is string => typeof url === "string") : [];
}

/** Where the page talks to a deployment's agent server, or why it does not. */
export type DeploymentEndpoint =
  | { kind: "router"; url: string; note?: string }
  | { kind: "not-deployed" }
  | { kind: "refused"; reason: string };

const trimmed = (url: string) => url.replace(/\/+$/, "");

/**
 * A deployment's URL (`source_config.custom_url`) is set by its workspace for an external image: the key goes
 * there only when it is the deployment's stable URL on one of the platform's routers. Otherwise the
 * deployment is opened through the router (which serves every deployment at `<router>/d/<id>`) when
 * there is a single one, and not at all when there is none or it cannot tell which.
 */
export function deploymentEndpoint(deployment: Deployment, routerUrls: string[]): DeploymentEndpoint {
  const stableUrls = routerUrls.map((router) => `${trimmed(router)}/d/${deployment.id}`);
  const own = deployment.source_config.custom_url;
  if (own && stableUrls.includes(trimmed(own))) return { kind: "router", url: trimmed(own) };
  if (!own && deployment.source !== "external_image") return { kind: "not-deployed" };
  if (stableUrls.length === 1) {
    const url = stableUrls[0]!;
    return own
      ? {
          kind: "router",
          url,
          note: `This deployment's own URL (${own}) is not on the platform's router: the page talks to it through the router, at ${url}, and sends your key nowhere else.`,
        }
      : { kind: "router", url };
  }
  return {
    kind: "refused",
    reason:
      `This deployment's URL (${own ?? "none"}) is not on a router this control plane knows, so the page does not send ` +
      "your key there. Use the SDK or curl with a key of the deployment's workspace, or ask the operator to list the " +
      "deployment's router in BERTH_LISTENER_ROUTER_URLS.",
  };
}
