import { terminalText } from "./terminal-text.js";

const LEVELS: Record<number, { name: string; colour: string }> = {
  10: { name: "TRACE", colour: "\u001b[90m" },
  20: { name: "DEBUG", colour: "\u001b[90m" },
  30: { name: "INFO", colour: "\u001b[32m" },
  40: { name: "WARN", colour: "\u001b[33m" },
  50: { name: "ERROR", colour: "\u001b[31m" },
  60: { name: "FATAL", colour: "\u001b[35m" },
};
const RESET = "\u001b[0m";
const DIM = "\u001b[2m";

/** Fields every line has, or that say nothing to someone reading a terminal. */
const OMITTED = new Set(["level", "time", "msg", "pid", "hostname", "service", "err"]);

interface LogEntry {
  level?: number;
  time?: number;
  msg?: string;
  err?: { message?: string; stack?: string };
  [field: string]: unknown;
}

function fieldText(value: unknown): string {
  return typeof value === "string" ? (/[\s"=]/.test(value) ? JSON.stringify(value) : value) : JSON.stringify(value);
}

/**
 * One pino JSON line as a line to read: `14:02:03 INFO  agent server listening url=http://...`, an error's stack on
 * the lines below. Colours only when `colour`. Text from elsewhere (a graph's log, a request's path) is made safe for
 * the terminal. A line that is not JSON is passed through as it is.
 */
export function prettyLogLine(json: string, colour: boolean): string {
  let entry: LogEntry;
  try {
    entry = JSON.parse(json) as LogEntry;
  } catch {
    return json;
  }
  const level = LEVELS[entry.level ?? 30] ?? { name: String(entry.level), colour: "" };
  const time = new Date(entry.time ?? Date.now()).toTimeString().slice(0, 8);
  const fields = Object.entries(entry)
    .filter(([key, value]) => !OMITTED.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${fieldText(value)}`)
    .join(" ");
  const paint = (code: string, text: string) => (colour ? `${code}${text}${RESET}` : text);
  const message = terminalText(entry.msg ?? entry.err?.message ?? "");
  let line = `${paint(DIM, time)} ${paint(level.colour, level.name.padEnd(5))} ${message}`;
  if (fields) line += ` ${paint(DIM, terminalText(fields))}`;
  if (entry.err?.stack) line += `\n${terminalText(entry.err.stack).replace(/^/gm, "    ")}`;
  return `${line}\n`;
}

/** A destination for pino that writes each line pretty to `out` (synchronously: a developer's terminal, not a server's log). */
export function prettyDestination(out: NodeJS.WriteStream): { write(chunk: string): void } {
  const colour = out.isTTY === true;
  return {
    write(chunk: string) {
      for (const json of chunk.split("\n")) if (json.trim() !== "") out.write(prettyLogLine(json, colour));
    },
  };
}
