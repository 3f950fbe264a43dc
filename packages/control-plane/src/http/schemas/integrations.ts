import { z } from "zod";
import { Timestamp, Uuid } from "./common.js";

export const Integration = z.object({
  id: z.string(),
  name: z.string(),
  provider: z.literal("repo_host"),
  installation_id: z.int(),
  created_at: Timestamp,
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
