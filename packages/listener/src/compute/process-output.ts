import type { Readable } from "node:stream";

export type LogLevel = "info" | "warn" | "error";

/** A line of the agent server's output, as the listener ships it. */
export interface OutputLine {
  level: LogLevel;
  message: string;
  /** The parsed pino entry, when the line was one. */
  entry?: Record<string, unknown>;
}

/** Longest message kept per line: a runaway line must not fill the log store. */
const MAX_MESSAGE = 16_000;
/** pino's bookkeeping fields: the rest of an entry is worth showing beside its message. */
const PINO_FIELDS = new Set(["level", "time", "pid", "hostname", "service", "msg", "v"]);

/** Calls `each` with every complete line of `stream`; the last line counts even without a newline. */
export function onLines(stream: Readable, each: (line: string) => void): void {
  let pending = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    pending += chunk;
    for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
      const line = pending.slice(0, end).replace(/\r$/, "");
      pending = pending.slice(end + 1);
      if (line) each(line);
    }
  });
  stream.on("end", () => {
    if (pending) each(pending);
    pending = "";
  });
}

/** pino numeric levels (30 info, 40 warn, 50 error, 60 fatal) or labels, folded into three. */
function levelOf(value: unknown): LogLevel {
  if (typeof value === "number") return value >= 50 ? "error" : value >= 40 ? "warn" : "info";
  if (value === "warn") return "warn";
  if (value === "error" || value === "fatal") return "error";
  return "info";
}

/** A stdout line: pino JSON (its message plus its other fields) or plain text at info. */
export function parseStdoutLine(line: string): OutputLine {
  if (line.startsWith("{")) {
    try {
      const entry = JSON.parse(line) as unknown;
      if (entry && typeof entry === "object" && !Array.isArray(entry)) {
        const fields = entry as Record<string, unknown>;
        const extra = Object.fromEntries(Object.entries(fields).filter(([key]) => !PINO_FIELDS.has(key)));
        const text = typeof fields.msg === "string" ? fields.msg : "";
        const details = Object.keys(extra).length > 0 ? JSON.stringify(extra) : "";
        const message = [text, details].filter(Boolean).join(" ") || line;
        return { level: levelOf(fields.level), message: message.slice(0, MAX_MESSAGE), entry: fields };
      }
    } catch {
      // Not JSON after all: shipped as text.
    }
  }
  return { level: "info", message: line.slice(0, MAX_MESSAGE) };
}

/** A stderr line: Node's own warnings are warnings; anything else there (stack traces, start failures) is an error. */
export function parseStderrLine(line: string): OutputLine {
  const warning = /^\(node:\d+\) (\[\w+\] )?\w*Warning/.test(line);
  return { level: warning ? "warn" : "error", message: line.slice(0, MAX_MESSAGE) };
}

/** The last lines a process printed, for the reason of a failed start or a crash. */
export class OutputTail {
  private readonly lines: string[] = [];
  private lastStderr: string | undefined;

  constructor(private readonly capacity = 20) {}

  push(line: string, fromStderr: boolean): void {
    this.lines.push(line.length > 500 ? `${line.slice(0, 500)}…` : line); // a reason in status_message, not a log dump
    if (this.lines.length > this.capacity) this.lines.shift();
    if (fromStderr) this.lastStderr = line;
  }

  text(): string {
    return this.lines.join("\n");
  }

  lastStderrLine(): string | undefined {
    return this.lastStderr;
  }
}
