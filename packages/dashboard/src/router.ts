import { useEffect, useState } from "react";

/** The dashboard's pages, read from the URL's hash (the control plane serves one index.html). */
export type Route =
  | { page: "list" }
  | { page: "new" }
  | { page: "deployment"; id: string }
  | { page: "conversations"; id: string }
  | { page: "unknown"; hash: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "") || "/";
  if (path === "/") return { page: "list" };
  if (path === "/new") return { page: "new" };
  const deployment = /^\/deployments\/([^/]+)(\/conversations)?$/.exec(path);
  if (deployment) {
    const id = decodeURIComponent(deployment[1]!);
    return deployment[2] ? { page: "conversations", id } : { page: "deployment", id };
  }
  return { page: "unknown", hash: path };
}

export const hrefOf = {
  list: () => "#/",
  new: () => "#/new",
  deployment: (id: string) => `#/deployments/${encodeURIComponent(id)}`,
  conversations: (id: string) => `#/deployments/${encodeURIComponent(id)}/conversations`,
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
