import { pino, type Logger } from "pino";
import { prettyDestination } from "./pretty-log.js";
import { escapeJsonControls } from "./terminal-text.js";

/**
 * Structured JSON logs on stdout, tagged with the service (or, `pretty`, lines formatted to read on a terminal,
 * pretty-log.ts); LOG_LEVEL sets the level. Writes are buffered and asynchronous (a synchronous write per log
 * line costs more than a whole run); the buffer is flushed when the process exits.
 */
export function createServiceLogger(service: string, options: { pretty?: boolean } = {}): Logger {
  // `berth dev` on a terminal: lines to read, written as they come (a developer waits for them; the volume is small).
  if (options.pretty) {
    return pino({ level: process.env.LOG_LEVEL ?? "info", base: { service } }, prettyDestination(process.stdout));
  }
  const destination = pino.destination({ sync: false, minLength: 4096 });
  const flush = () => destination.flushSync();
  process.once("exit", flush);
  // An idle process logs nothing: a flush of an empty buffer would still be a write, four times a second.
  let unflushed = false;
  setInterval(() => {
    if (!unflushed) return;
    unflushed = false;
    destination.flush();
  }, 250).unref();
  const streamWrite = (line: string) => {
    unflushed = true;
    // JSON escapes C0 controls; a deployment's text logged here (a crash's last lines) may hold C1 ones too.
    return escapeJsonControls(line);
  };
  return pino({ level: process.env.LOG_LEVEL ?? "info", base: { service }, hooks: { streamWrite } }, destination);
}

export type { Logger };
