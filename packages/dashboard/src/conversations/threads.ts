import type { Thread } from "@langchain/langgraph-sdk";
import { messageSummary, stateMessages } from "./messages";

/** Titles and previews longer than this are cut (the row shows one line of each). */
const MAX_CHARS = 120;

/** Markdown's marks dropped (headings, list bullets, quotes, emphasis, code fences), for one line of plain text. */
function plain(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/^\s*(?:#{1,6}\s|[-*+]\s|>\s?|\d+\.\s|```\S*)/, ""))
    .join(" ")
    .replace(/\*\*|__|`/g, "");
}

function oneLine(text: string): string {
  const line = plain(text).replace(/\s+/g, " ").trim();
  return line.length > MAX_CHARS ? `${line.slice(0, MAX_CHARS - 1)}…` : line;
}

/** A thread's title: its metadata's `title` when set, else its first human message; empty when it has neither. */
export function threadTitle(thread: Thread): string {
  const title = thread.metadata?.title;
  if (typeof title === "string" && title.trim() !== "") return oneLine(title);
  const first = stateMessages(thread.values).find((message) => message.kind === "human");
  return oneLine(messageSummary(first));
}

/** A thread's last message in one line (its text, else the tools it called). */
export function threadPreview(thread: Thread): string {
  return oneLine(messageSummary(stateMessages(thread.values).at(-1)));
}

/** The assistant that last ran on the thread (the server keeps its id in the metadata), by name when known. */
export function threadAssistant(thread: Thread, names: ReadonlyMap<string, string>): string | undefined {
  const { assistant_id: assistantId, graph_id: graphId } = (thread.metadata ?? {}) as Record<string, unknown>;
  if (typeof assistantId === "string") return names.get(assistantId) ?? (typeof graphId === "string" ? graphId : undefined);
  return typeof graphId === "string" ? graphId : undefined;
}
