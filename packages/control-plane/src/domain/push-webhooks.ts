import { UnauthorizedError } from "@berth/service-kit";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IntegrationKind } from "../storage/types.js";

/*
 * Push webhooks as git hosts send them. GitHub's format (also what the
 * `git` and `local` kinds accept, so a post-receive hook can send it),
 * Gitea's and Forgejo's, and GitLab's: where each puts the signature, the
 * delivery id and the pushed ref differ; what Berth needs from them does not.
 */

export type Headers = Record<string, string | string[] | undefined>;

/** A push: the full ref (`refs/heads/main`), the new head, and every URL the host gives the repository. */
export interface Push {
  kind: "push";
  deliveryId: string;
  ref: string;
  after: string;
  repositoryUrls: string[];
}

/** Anything else the host sends (a ping, another event): acknowledged, nothing happens. */
export interface OtherEvent {
  kind: "other";
  deliveryId: string | undefined;
  event: string;
}

const ZERO_SHA = /^0+$/;

/**
 * Checks the delivery's signature with the integration's webhook secret
 * (401 when missing or wrong) and reads the push out of it.
 */
export function readPushWebhook(kind: IntegrationKind, headers: Headers, body: Buffer, secret: string): Push | OtherEvent {
  const header = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  let event: string | undefined;
  let deliveryId: string | undefined;
  if (kind === "gitlab") {
    // GitLab sends the secret itself, not a signature of the body.
    const token = header("x-gitlab-token");
    if (!token || !sameText(token, secret)) throw new UnauthorizedError("The webhook's X-Gitlab-Token is missing or wrong");
    event = header("x-gitlab-event") === "Push Hook" ? "push" : (header("x-gitlab-event") ?? "unknown");
    deliveryId = header("x-gitlab-event-uuid") ?? header("x-gitlab-webhook-uuid");
  } else if (kind === "gitea" && (header("x-gitea-signature") || header("x-forgejo-signature"))) {
    const signature = header("x-forgejo-signature") ?? header("x-gitea-signature")!;
    if (!sameText(signature, hmacHex(secret, body))) throw new UnauthorizedError("The webhook's signature does not match");
    event = header("x-forgejo-event") ?? header("x-gitea-event");
    deliveryId = header("x-forgejo-delivery") ?? header("x-gitea-delivery");
  } else {
    const signature = header("x-hub-signature-256");
    if (!signature) throw new UnauthorizedError("The webhook is not signed (X-Hub-Signature-256)");
    if (!sameText(signature, `sha256=${hmacHex(secret, body)}`))
      throw new UnauthorizedError("The webhook's signature does not match");
    event = header("x-github-event") ?? header("x-gitea-event") ?? header("x-forgejo-event");
    deliveryId = header("x-github-delivery") ?? header("x-gitea-delivery") ?? header("x-forgejo-delivery");
  }
  if (event !== "push") return { kind: "other", deliveryId, event: event ?? "unknown" };
  const payload = parseJson(body);
  const ref = typeof payload.ref === "string" ? payload.ref : undefined;
  const after = typeof payload.after === "string" ? payload.after : undefined;
  if (!ref || !after) return { kind: "other", deliveryId, event: "push without ref or head" };
  if (ZERO_SHA.test(after)) return { kind: "other", deliveryId, event: "branch deleted" };
  return { kind: "push", deliveryId: deliveryId ?? `${ref}@${after}`, ref, after, repositoryUrls: repositoryUrlsOf(payload) };
}

/** The signature a sender computes: hex HMAC-SHA256 of the body with the shared secret. */
export function hmacHex(secret: string, body: Buffer): string {
  return createHmac("sha256", secret).update(body).digest("hex");
}

function repositoryUrlsOf(payload: Record<string, unknown>): string[] {
  const urls: string[] = [];
  for (const holder of [payload.repository, payload.project]) {
    if (!holder || typeof holder !== "object") continue;
    for (const key of [
      "clone_url",
      "html_url",
      "ssh_url",
      "git_url",
      "url",
      "git_http_url",
      "git_ssh_url",
      "web_url",
      "homepage",
    ]) {
      const value = (holder as Record<string, unknown>)[key];
      if (typeof value === "string" && value !== "") urls.push(value);
    }
  }
  return urls;
}

function parseJson(body: Buffer): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(body.toString("utf8"));
    return value && typeof value === "object" ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
