import { z } from "zod";
import { Text } from "./primitives.js";

export const INTEGRATION_KINDS = ["git", "github", "gitlab", "gitea", "local"] as const;

const Credentials = z.union([
  z.strictObject({ token: Text.min(1).max(4096), username: Text.min(1).max(200).optional() }),
  z.strictObject({ ssh_private_key: Text.min(1).max(20_000), known_hosts: Text.min(1).max(20_000) }),
]);

const RepoUrls = z
  .array(Text.min(1).max(2000))
  .max(500)
  .describe("Repository URLs (optionally `#<default branch>`) it may deploy, besides what its host lists");

export const IntegrationCreate = z.strictObject({
  name: Text.min(1).max(200),
  kind: z.enum(INTEGRATION_KINDS),
  base_url: Text.min(1).max(2000).nullable().optional(),
  credentials: Credentials.nullable().optional(),
  repos: RepoUrls.optional(),
  webhook_secret: Text.min(16).max(200).optional().describe("Default: a random one, answered once"),
});

export const IntegrationUpdate = z.strictObject({
  name: Text.min(1).max(200).optional(),
  base_url: Text.min(1).max(2000).nullable().optional(),
  credentials: Credentials.nullable().optional(),
  repos: RepoUrls.optional(),
  rotate_webhook_secret: z.literal(true).optional(),
});

export type IntegrationCreateInput = z.infer<typeof IntegrationCreate>;
export type IntegrationUpdateInput = z.infer<typeof IntegrationUpdate>;
