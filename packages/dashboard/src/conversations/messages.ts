/** A message as the transcript shows it. */
export interface ShownMessage {
  id: string;
  /** Who spoke, as text: You, Assistant, Tool, System. */
  role: string;
  text: string;
}

interface WireMessage {
  id?: string | null;
  type?: string;
  role?: string;
  content?: unknown;
}

const ROLES: Record<string, string> = {
  human: "You",
  user: "You",
  ai: "Assistant",
  assistant: "Assistant",
  AIMessageChunk: "Assistant",
  tool: "Tool",
  ToolMessageChunk: "Tool",
  system: "System",
};

/** The text of a message's content: a string, or the text blocks of a list of content blocks. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? "" : JSON.stringify(content);
  return content
    .map((block: unknown) => {
      if (typeof block === "string") return block;
      const text = (block as { text?: unknown } | null)?.text;
      return typeof text === "string" ? text : "";
    })
    .join("");
}

function shown(message: WireMessage, fallbackId: string): ShownMessage {
  const kind = message.type ?? message.role ?? "";
  return { id: message.id ?? fallbackId, role: ROLES[kind] ?? kind, text: contentText(message.content) };
}

/** The messages of a state's values (a graph without a `messages` channel has none). */
export function stateMessages(values: unknown): ShownMessage[] {
  const messages = (values as { messages?: unknown } | null | undefined)?.messages;
  if (!Array.isArray(messages)) return [];
  return messages.map((message, index) => shown(message as WireMessage, `state-${index}`));
}

/** Appends a streamed chunk (a `messages` event's message) to the message of the same id, or starts one. */
export function appendChunk(streamed: ShownMessage[], chunk: unknown): ShownMessage[] {
  const piece = shown(chunk as WireMessage, `chunk-${streamed.length}`);
  const at = streamed.findIndex((message) => message.id === piece.id);
  if (at === -1) return [...streamed, piece];
  const next = streamed.slice();
  next[at] = { ...next[at]!, text: next[at]!.text + piece.text };
  return next;
}

/** The state's messages, then the streamed ones the state does not hold yet (the reply being written). */
export function transcript(state: ShownMessage[], streamed: ShownMessage[]): ShownMessage[] {
  const known = new Set(state.map((message) => message.id));
  return [...state, ...streamed.filter((message) => !known.has(message.id))];
}
