import { isSupportedChannel } from "@langchain/langgraph/stream";
import { z } from "zod";

/** A protocol v2 command: `{id, method, params?}`. */
export const ProtocolCommandSchema = z.object({
  id: z.number().int().min(0),
  method: z.string().min(1),
  params: z.record(z.string(), z.unknown()).optional(),
});

const ChannelSchema = z.string().refine(isSupportedChannel, { message: "unknown channel" });

/** Which events a subscriber wants: channels, namespace prefixes and how deep below them. */
export const SubscriptionFilterSchema = z.object({
  channels: z.array(ChannelSchema).min(1),
  namespaces: z.array(z.array(z.string())).optional(),
  depth: z.number().int().min(0).optional(),
  /** Replay only events after this seq. */
  since: z.number().int().min(0).optional(),
});

/** The body of `POST /threads/{id}/stream/events`: one subscription per connection. */
export const EventStreamBodySchema = SubscriptionFilterSchema.strict();

export const ProtocolSuccessSchema = z.object({
  type: z.literal("success"),
  id: z.number().int(),
  result: z.unknown(),
  meta: z.object({ thread_id: z.string(), applied_through_seq: z.number().int() }),
});

export const ProtocolErrorSchema = z.object({
  type: z.literal("error"),
  id: z.number().int().nullable(),
  error: z.string(),
  message: z.string(),
});

export type SubscriptionFilter = z.infer<typeof SubscriptionFilterSchema>;
