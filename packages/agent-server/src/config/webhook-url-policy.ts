import { isPrivateHost } from "./private-address.js";
import type { WebhookUrlPolicy } from "./webhook-config.js";

const WEBHOOK_FORMS = "webhook must be an absolute http(s) URL, or a path of the project's http.app starting with /";

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443 };

/** Whether a host is one of `allowed`: an exact name, or `*.domain` for its subdomains (not the apex), as the reference matches. */
export function hostAllowed(host: string, allowed: string[]): boolean {
  const name = host.toLowerCase();
  return allowed.some((entry) =>
    entry.startsWith("*.") ? name.endsWith(entry.slice(1)) && name.length > entry.length - 1 : name === entry,
  );
}

/**
 * A webhook that names a route of the server itself (`/custom/webhook`, a path of the project's `http.app`): delivered
 * in process, never over the network. `//host/...` is a URL without its scheme, not a path.
 */
export function isOwnRoutePath(webhook: string): boolean {
  return webhook.startsWith("/") && !webhook.startsWith("//") && !webhook.includes("\\");
}

/**
 * Why a run may not be created with this webhook URL (langgraph.json's
 * `webhooks.url`, then the private-target rule), or undefined when it may.
 * Host names that resolve to private addresses are refused at delivery.
 */
export function webhookUrlProblem(url: string, policy: WebhookUrlPolicy, allowPrivate: boolean): string | undefined {
  if (policy.maxUrlLength !== undefined && url.length > policy.maxUrlLength) {
    return `webhook URL is longer than ${policy.maxUrlLength} characters (webhooks.url.max_url_length)`;
  }
  if (isOwnRoutePath(url)) {
    // The network rules below are about leaving the server: a path of its own routes does not.
    return policy.disableLoopback
      ? "webhook paths of the server's own routes are disabled (webhooks.url.disable_loopback)"
      : undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return WEBHOOK_FORMS;
  }
  if (!(parsed.protocol in DEFAULT_PORTS)) return WEBHOOK_FORMS;
  if (policy.requireHttps && parsed.protocol !== "https:") return "webhook URL must use https (webhooks.url.require_https)";
  if (policy.allowedDomains.length > 0 && !hostAllowed(parsed.hostname, policy.allowedDomains)) {
    return `webhook host ${parsed.hostname} is not allowed (webhooks.url.allowed_domains)`;
  }
  const port = parsed.port ? Number(parsed.port) : DEFAULT_PORTS[parsed.protocol];
  if (policy.allowedPorts.length > 0 && !policy.allowedPorts.includes(port)) {
    return `webhook port ${port} is not allowed (webhooks.url.allowed_ports)`;
  }
  if (!allowPrivate && isPrivateHost(parsed.hostname)) {
    return `webhook host ${parsed.hostname} is a private or loopback address (allowed in berth dev or with BERTH_WEBHOOK_ALLOW_PRIVATE=1)`;
  }
  return undefined;
}
