import { z } from "zod";
import { ConfigError } from "./config-error.js";

/** langgraph.json's `webhooks.url`: which webhook URLs a run may be created with (the official server's WebhookUrlPolicy). */
const WebhookUrlPolicyJson = z.strictObject({
  require_https: z.boolean().optional(),
  allowed_domains: z
    .array(z.string().regex(/^(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/, "a host name, or *.domain for its subdomains"))
    .optional(),
  allowed_ports: z.array(z.number().int().min(1).max(65_535)).optional(),
  max_url_length: z.number().int().positive().optional(),
  disable_loopback: z.boolean().optional(),
});

/** langgraph.json's `webhooks` section. */
export const WebhooksJson = z.strictObject({
  env_prefix: z.string().min(1).optional(),
  url: WebhookUrlPolicyJson.optional(),
  headers: z
    .record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "an HTTP header name"), z.string().regex(/^[^\r\n]*$/, "one line"))
    .optional(),
});

export type WebhooksJsonSection = z.infer<typeof WebhooksJson>;

export interface WebhookUrlPolicy {
  requireHttps: boolean;
  /** Exact host names, or `*.domain` (its subdomains, not the apex); empty: any host. */
  allowedDomains: string[];
  /** Empty: any port. */
  allowedPorts: number[];
  maxUrlLength?: number;
  /** Webhooks that are paths of the server's own routes are refused. */
  disableLoopback: boolean;
}

export interface WebhookSettings {
  policy: WebhookUrlPolicy;
  /** Static headers added to every delivery, their `${{ env.NAME }}` templates resolved. */
  headers: Record<string, string>;
}

/** The reference's default: header templates may read only variables with this prefix. */
const DEFAULT_ENV_PREFIX = "LG_WEBHOOK_";
const TEMPLATE = /\$\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/**
 * The section's settings, header templates resolved from `env` (after the
 * project's env is applied). A template naming a variable outside the prefix,
 * or one that is not set, stops the start: a header silently sent empty would
 * fail every delivery.
 */
export function webhookSettings(json: WebhooksJsonSection | undefined, env: NodeJS.ProcessEnv): WebhookSettings {
  const prefix = json?.env_prefix ?? DEFAULT_ENV_PREFIX;
  const headers: Record<string, string> = {};
  for (const [name, template] of Object.entries(json?.headers ?? {})) {
    headers[name] = template.replace(TEMPLATE, (_match, variable: string) => {
      if (!variable.startsWith(prefix)) {
        throw new ConfigError(`webhooks.headers.${name}: \${{ env.${variable} }} must name a variable starting with ${prefix}`);
      }
      const value = env[variable];
      if (value === undefined) throw new ConfigError(`webhooks.headers.${name}: ${variable} is not set`);
      return value;
    });
  }
  return {
    policy: {
      requireHttps: json?.url?.require_https ?? false,
      allowedDomains: (json?.url?.allowed_domains ?? []).map((domain) => domain.toLowerCase()),
      allowedPorts: json?.url?.allowed_ports ?? [],
      maxUrlLength: json?.url?.max_url_length,
      disableLoopback: json?.url?.disable_loopback ?? false,
    },
    headers,
  };
}
