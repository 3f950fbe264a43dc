import { z } from "zod";

/** A run's webhook delivery: where it goes, how many attempts it took, and how the last one went. */
export const WebhookDeliverySchema = z.object({
  run_id: z.string(),
  thread_id: z.string(),
  url: z.string(),
  status: z.enum(["pending", "delivered", "failed"]),
  attempts: z.number().int(),
  last_status: z.number().int().nullable(),
  last_error: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  delivered_at: z.string().nullable(),
});
