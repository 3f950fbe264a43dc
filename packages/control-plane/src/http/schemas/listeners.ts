import { z } from "zod";
import { COMPUTE_TYPES } from "@berth/listener-protocol";
import { Page, Timestamp, Uuid } from "./common.js";

export * from "../../domain/inputs/listener.js";

export const Listener = z.object({
  id: z.string(),
  tenant_id: z.string(),
  compute_type: z.enum(COMPUTE_TYPES),
  compute_id: z.string(),
  compute_config: z.object({ cluster_namespaces: z.array(z.string()).nullable() }),
  version: z.string().nullable(),
  default: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ListenerPage = Page(Listener);
export const ListenerIdParams = z.object({ listener_id: Uuid });
