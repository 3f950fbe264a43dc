import { z } from "zod";

/** `GET /info`: which Berth answers (open without a key, as an agent server's `/info` is). */
export const ServerInfo = z.object({
  /** Berth's version: the packages' version (`berth --version` prints the same). */
  version: z.string(),
  server: z.literal("berth"),
  service: z.literal("control-plane"),
});
