import { useEffect, useState } from "react";

/** The dashboard's pages, read from the URL's hash (the control plane serves one index.html). */
export type Route =
  | { page: "list" }
  | { page: "new" }
  | { page: "deployment"; id: string }
  | { page: "conversations"; id: string }
  | { page: "studio"; id: string }
  | { page: "traces"; id: string }
  | { page: "trace"; id: string; runId: string }
  | { page: "metrics"; id: string }
  | { page: "unknown"; hash: string };

/** The pages under a deployment, by the path segment after its id. */
const DEPLOYMENT_PAGES = ["conversations", "studio", "traces", "metrics"] as const;

export function parseRoute(hash: string): Route {
  const [path = "/"] = (hash.replace(/^#/, "") || "/").split("?");
  if (path === "/") return { page: "list" };
  if (path === "/new") return { page: "new" };
  const deployment = /^\/deployments\/([^/]+)(?:\/([a-z]+)(?:\/([^/]+))?)?$/.exec(path);
  if (deployment) {
    const id = decodeURIComponent(deployment[1]!);
    const sub = deployment[2];
    const leaf = deployment[3];
    if (sub === undefined) return { page: "deployment", id };
    if (sub === "traces" && leaf !== undefined) return { page: "trace", id, runId: decodeURIComponent(leaf) };
    const known = DEPLOYMENT_PAGES.find((name) => name === sub);
    if (known && leaf === undefined) return { page: known, id };
  }
  return { page: "unknown", hash: path };
}

/** A page's own query, after `?` in the hash (e.g. `#/deployments/x/studio?thread=...`). */
export function hashQuery(): URLSearchParams {
  const hash = window.location.hash;
  const at = hash.indexOf("?");
  return new URLSearchParams(at === -1 ? "" : hash.slice(at + 1));
}

const deploymentPath = (id: string) => `#/deployments/${encodeURIComponent(id)}`;

export const hrefOf = {
  list: () => "#/",
  new: () => "#/new",
  deployment: (id: string) => deploymentPath(id),
  conversations: (id: string) => `${deploymentPath(id)}/conversations`,
  /** The Studio, optionally opened on an assistant and a thread. */
  studio: (id: string, open: { assistantId?: string; threadId?: string } = {}) => {
    const query = new URLSearchParams();
    if (open.assistantId) query.set("assistant", open.assistantId);
    if (open.threadId) query.set("thread", open.threadId);
    const text = query.toString();
    return `${deploymentPath(id)}/studio${text ? `?${text}` : ""}`;
  },
  traces: (id: string) => `${deploymentPath(id)}/traces`,
  /** A run's trace: the agent server's run id is its trace's root run id. */
  trace: (id: string, runId: string) => `${deploymentPath(id)}/traces/${encodeURIComponent(runId)}`,
  metrics: (id: string) => `${deploymentPath(id)}/metrics`,
};

export function navigate(href: string): void {
  window.location.hash = href;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return route;
}
