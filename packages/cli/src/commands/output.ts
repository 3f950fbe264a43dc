import type { LogLine } from "./client.js";

/** Rows as columns aligned by padding: a few lines of code instead of a table library's boxes and dependencies. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join("\n")}\n`;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function formatLogLine(line: LogLine): string {
  return `[${line.timestamp}] [${line.level}] ${line.message}\n`;
}

/** Prints `berth <command>: <message>` to stderr; resolves to the exit code (2: wrong usage, 1: anything else). */
export function fail(command: string, message: string, code = 1): number {
  process.stderr.write(`berth ${command}: ${message}\n`);
  return code;
}

/** A failed step as an exit code: its message (the control plane's answer, or why it could not be reached). */
export function failWith(command: string, error: unknown): number {
  return fail(command, error instanceof Error ? error.message : String(error));
}
