import { z } from "zod";

/** langgraph.json's `checkpointer` section: Berth applies its `ttl` (other keys, such as `serde`, are named in a warning). */
export const CheckpointerJson = z.looseObject({
  ttl: z
    .object({
      strategy: z.literal("delete").default("delete"),
      default_ttl: z.number().positive().nullish(),
      sweep_interval_minutes: z.number().positive().nullish(),
    })
    .nullish(),
});

export interface CheckpointerSettings {
  /** Minutes a thread created without `ttl` lives; null: forever. */
  defaultTtlMinutes: number | null;
  /** How often expired threads are deleted. */
  sweepIntervalMinutes: number;
}

const DEFAULT_SWEEP_MINUTES = 5;

export function checkpointerSettings(json: z.infer<typeof CheckpointerJson> | undefined): CheckpointerSettings {
  return {
    defaultTtlMinutes: json?.ttl?.default_ttl ?? null,
    sweepIntervalMinutes: json?.ttl?.sweep_interval_minutes ?? DEFAULT_SWEEP_MINUTES,
  };
}

/** Keys of the section Berth does not apply. */
export function unappliedCheckpointerKeys(json: z.infer<typeof CheckpointerJson> | undefined): string[] {
  return Object.keys(json ?? {}).filter((key) => key !== "ttl");
}
