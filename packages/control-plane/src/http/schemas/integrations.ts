import { z } from "zod";
import { INTEGRATION_KINDS } from "../../domain/inputs/integration.js";
import { Timestamp, Uuid } from "./common.js";

export { IntegrationCreate, IntegrationUpdate } from "../../domain/inputs/integration.js";

export const Integration = z.object({
  id: z.string(),
  name: z.string(),
  provider: z.literal("repo_host"),
  installation_id: z.int(),
  kind: z.enum(INTEGRATION_KINDS),
  base_url: z.string().nullable(),
  credentials: z.enum(["token", "ssh"]).nullable().describe("Which kind of credentials it holds (they are never returned)"),
  webhook_url: z.string().describe("Where the host sends push webhooks (path relative to the control plane)"),
  created_at: Timestamp,
});

/** Creation and secret rotation answer the webhook secret, once. */
export const IntegrationWithSecret = Integration.extend({
  webhook_secret: z.string().describe("Shown once: configure it as the host's webhook secret"),
});

export const Repository = z.object({
  host_integration_id: z.string(),
  id: z.int(),
  name: z.string(),
  owner: z.string(),
  url: z.string(),
  default_branch: z.string(),
});

export const IntegrationIdParams = z.object({ integration_id: Uuid });
