import { z } from "zod";

/** Unknown keys are ignored, as on the official server (suites written for other servers may send more flags). */
export const TruncateBodySchema = z.object({
  runs: z.boolean().optional(),
  threads: z.boolean().optional(),
  assistants: z.boolean().optional(),
  checkpointer: z.boolean().optional(),
  store: z.boolean().optional(),
});
