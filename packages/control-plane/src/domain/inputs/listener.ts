import { z } from "zod";
import { COMPUTE_TYPES } from "@berth/listener-protocol";
import { Text } from "./primitives.js";

const ComputeConfig = z.strictObject({
  cluster_namespaces: z.array(Text.min(1)).nullish().describe("Namespaces a cluster listener may deploy to"),
});

const Default = z
  .boolean()
  .nullish()
  .describe("Runs the workspace's deployments that name no listener (at most one per workspace: marking one unmarks the other)");

export const ListenerCreateRequest = z.strictObject({
  compute_type: z.enum(COMPUTE_TYPES),
  compute_id: Text.min(1).max(253),
  compute_config: ComputeConfig.nullish(),
  version: Text.nullish(),
  default: Default,
});
export type ListenerCreateInput = z.infer<typeof ListenerCreateRequest>;

export const ListenerPatchRequest = z.strictObject({
  compute_type: z.unknown().optional().describe("Immutable: refused (400) unless it is the current value"),
  compute_id: z.unknown().optional().describe("Immutable: refused (400) unless it is the current value"),
  compute_config: ComputeConfig.nullish(),
  version: Text.nullish(),
  default: Default,
});
export type ListenerPatchInput = z.infer<typeof ListenerPatchRequest>;
