import { terminalJson, terminalText } from "@berth/service-kit";
import Table from "cli-table3";
import type { LogLine } from "./client.js";

/** No borders: columns two spaces apart, so that a table reads (and greps) like plain text. */
const BORDERLESS = {
  top: "",
  "top-mid": "",
  "top-left": "",
  "top-right": "",
  bottom: "",
  "bottom-mid": "",
  "bottom-left": "",
  "bottom-right": "",
  left: "",
  "left-mid": "",
  mid: "",
  "mid-mid": "",
  right: "",
  "right-mid": "",
  middle: "  ",
};

export function table(headers: string[], rows: string[][]): string {
  const rendered = new Table({
    head: headers,
    chars: BORDERLESS,
    // No colours: the text is the same on a terminal, in a file and in a pipe.
    style: { head: [], border: [], "padding-left": 0, "padding-right": 0, compact: true },
  });
  rendered.push(...rows.map((row) => row.map(terminalText)));
  const lines = rendered.toString().split("\n");
  return `${lines.map((line) => line.trimEnd()).join("\n")}\n`;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${terminalJson(value, 2)}\n`);
}

export function formatLogLine(line: LogLine): string {
  return `${terminalText(`[${line.timestamp}] [${line.level}] ${line.message}`)}\n`;
}

/** `revision <id>: <status> (<reason>)`, as the commands that follow a revision print each step. */
export function revisionStatusLine(revision: { id: string; status: string; status_message: string | null }): string {
  return `${terminalText(`revision ${revision.id}: ${revision.status} (${revision.status_message ?? ""})`)}\n`;
}

/**
 * Prints `berth <command>: <message>` to stderr; resolves to the exit code (2: wrong usage, 1: anything else). The
 * message often quotes the control plane (a deployment's reason, say): it is printed as terminalText.
 */
export function fail(command: string, message: string, code = 1): number {
  process.stderr.write(`berth ${command}: ${terminalText(message)}\n`);
  return code;
}

/** A failed step as an exit code: its message (the control plane's answer, or why it could not be reached). */
export function failWith(command: string, error: unknown): number {
  return fail(command, error instanceof Error ? error.message : String(error));
}
