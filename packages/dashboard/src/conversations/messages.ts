/** Who wrote a message. */
export type MessageKind = "human" | "ai" | "tool" | "system" | "other";

/** A tool call an AI message makes, with the tool's answer once the transcript holds it. */
export interface ShownToolCall {
  /** The call's id (a ToolMessage's `tool_call_id` names it); `call-<n>` when the model gave none. */
  id: string;
  name: string;
  /** The arguments as parsed; the raw text while streamed arguments do not parse yet. */
  args: unknown;
  /** While streaming: the arguments' text so far (chunks carry pieces of a JSON string). */
  argsText?: string;
  /** While streaming: the call's place in the message (its later pieces carry no id, only this). */
  index?: number;
  /** The ToolMessage answering this call, paired by `pairToolResults`. */
  result?: ShownMessage;
}

/** A message as the transcript shows it. */
export interface ShownMessage {
  id: string;
  kind: MessageKind;
  /** Who spoke, as text: You, Assistant, Tool, System. */
  role: string;
  /** The text parts, joined. */
  text: string;
  /** Content parts that are not text (images, files...), shown as JSON. */
  otherParts: unknown[];
  toolCalls: ShownToolCall[];
  /** A tool message's answer is to this call. */
  toolCallId?: string;
  /** A tool message's tool name (or a message's author name). */
  name?: string;
  /** A tool message's status: `error` when the tool failed. */
  status?: string;
}

interface WireToolCall {
  id?: string | null;
  name?: string;
  args?: unknown;
  index?: number;
}

interface WireMessage {
  id?: string | null;
  type?: string;
  role?: string;
  content?: unknown;
  name?: string | null;
  tool_calls?: WireToolCall[];
  tool_call_chunks?: WireToolCall[];
  tool_call_id?: string;
  status?: string;
}

const KINDS: Record<string, MessageKind> = {
  human: "human",
  user: "human",
  HumanMessageChunk: "human",
  ai: "ai",
  assistant: "ai",
  AIMessageChunk: "ai",
  tool: "tool",
  ToolMessageChunk: "tool",
  system: "system",
  SystemMessageChunk: "system",
};

const ROLES: Record<MessageKind, string> = { human: "You", ai: "Assistant", tool: "Tool", system: "System", other: "" };

/** Parts a model repeats from its `tool_calls` (Anthropic's `tool_use`): shown once, as the call. */
const TOOL_PARTS = new Set(["tool_use", "input_json_delta", "function_call"]);

function partText(part: unknown): string | undefined {
  if (typeof part === "string") return part;
  const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
  return typeof text === "string" && (type === undefined || type === "text" || type === "text_delta") ? text : undefined;
}

/** The text of a message's content: a string, or its text parts joined. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? "" : JSON.stringify(content);
  return content
    .map(partText)
    .filter((text) => text !== undefined)
    .join("");
}

function otherParts(content: unknown, hasToolCalls: boolean): unknown[] {
  if (!Array.isArray(content)) return [];
  return content.filter((part) => {
    if (partText(part) !== undefined) return false;
    const type = (part as { type?: unknown } | null)?.type;
    return !(hasToolCalls && typeof type === "string" && TOOL_PARTS.has(type));
  });
}

/** Arguments as an object when their text parses, else the text itself (a call still being streamed). */
function parseArgs(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function wireCalls(message: WireMessage): ShownToolCall[] {
  const chunks = message.tool_call_chunks ?? [];
  // A streamed chunk's `tool_calls` are its chunks parsed so far: the chunks keep the raw text to append to.
  if (chunks.length > 0) {
    return chunks.map((chunk, index) => {
      const argsText = typeof chunk.args === "string" ? chunk.args : JSON.stringify(chunk.args ?? {});
      const at = chunk.index ?? index;
      return { id: chunk.id ?? `call-${at}`, name: chunk.name ?? "", args: parseArgs(argsText), argsText, index: at };
    });
  }
  return (message.tool_calls ?? []).map((call, index) => ({
    id: call.id ?? `call-${index}`,
    name: call.name ?? "",
    args: call.args ?? {},
  }));
}

function shown(message: WireMessage, fallbackId: string): ShownMessage {
  const kind = KINDS[message.type ?? message.role ?? ""] ?? "other";
  const toolCalls = kind === "ai" ? wireCalls(message) : [];
  return {
    id: message.id ?? fallbackId,
    kind,
    role: ROLES[kind] || (message.type ?? message.role ?? ""),
    text: contentText(message.content),
    otherParts: otherParts(message.content, toolCalls.length > 0),
    toolCalls,
    ...(message.tool_call_id ? { toolCallId: message.tool_call_id } : {}),
    ...(message.name ? { name: message.name } : {}),
    ...(message.status ? { status: message.status } : {}),
  };
}

/** The messages of a state's values (a graph without a `messages` channel has none). */
export function stateMessages(values: unknown): ShownMessage[] {
  const messages = (values as { messages?: unknown } | null | undefined)?.messages;
  if (!Array.isArray(messages)) return [];
  return messages.map((message, index) => shown(message as WireMessage, `state-${index}`));
}

/** Streamed tool-call pieces joined: the first piece names the call, the next ones carry more of its arguments. */
function mergeCalls(kept: ShownToolCall[], added: ShownToolCall[]): ShownToolCall[] {
  const merged = kept.slice();
  for (const piece of added) {
    const at = merged.findIndex((call) => call.id === piece.id || (piece.index !== undefined && call.index === piece.index));
    const previous = merged[at];
    if (!previous) merged.push(piece);
    else if (piece.argsText === undefined) merged[at] = { ...previous, ...piece };
    else {
      const argsText = (previous.argsText ?? "") + piece.argsText;
      merged[at] = { ...previous, name: previous.name || piece.name, argsText, args: parseArgs(argsText) };
    }
  }
  return merged;
}

/** Appends a streamed chunk (a `messages` event's message) to the message of the same id, or starts one. */
export function appendChunk(streamed: ShownMessage[], chunk: unknown): ShownMessage[] {
  const piece = shown(chunk as WireMessage, `chunk-${streamed.length}`);
  const at = streamed.findIndex((message) => message.id === piece.id);
  if (at === -1) return [...streamed, piece];
  const next = streamed.slice();
  const kept = next[at]!;
  next[at] = {
    ...kept,
    text: kept.text + piece.text,
    otherParts: [...kept.otherParts, ...piece.otherParts],
    toolCalls: mergeCalls(kept.toolCalls, piece.toolCalls),
  };
  return next;
}

/** The state's messages, then the streamed ones the state does not hold yet (the reply being written). */
export function transcript(state: ShownMessage[], streamed: ShownMessage[]): ShownMessage[] {
  const known = new Set(state.map((message) => message.id));
  return [...state, ...streamed.filter((message) => !known.has(message.id))];
}

/**
 * Each tool message put under the call it answers (by `tool_call_id`) rather than shown on its own; a tool
 * message whose call the transcript does not hold stays a message of its own.
 */
export function pairToolResults(messages: ShownMessage[]): ShownMessage[] {
  const results = new Map<string, ShownMessage>();
  const calls = new Set(messages.flatMap((message) => message.toolCalls.map((call) => call.id)));
  for (const message of messages) {
    if (message.kind === "tool" && message.toolCallId && calls.has(message.toolCallId)) results.set(message.toolCallId, message);
  }
  return messages
    .filter((message) => !(message.kind === "tool" && message.toolCallId && results.has(message.toolCallId)))
    .map((message) =>
      message.toolCalls.length === 0
        ? message
        : { ...message, toolCalls: message.toolCalls.map((call) => ({ ...call, result: results.get(call.id) })) },
    );
}

/** What a message says, for a thread's title or preview: its text, else the tools it called. */
export function messageSummary(message: ShownMessage | undefined): string {
  if (!message) return "";
  const text = message.text.trim();
  if (text) return text;
  if (message.toolCalls.length > 0) return `Called ${message.toolCalls.map((call) => call.name).join(", ")}`;
  return message.otherParts.length > 0 ? "(attachment)" : "";
}
