import { pino, type Logger } from "pino";

/** Structured JSON logs on stdout; LOG_LEVEL sets the level. */
export function createLogger(): Logger {
  return pino({ level: process.env.LOG_LEVEL ?? "info", base: { service: "agent-server" } });
}

export type { Logger };
