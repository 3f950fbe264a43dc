import { randomUUID } from "node:crypto";
import type { JsonObject } from "../../storage/types.js";
import { type A2aMessage, A2aError, A2aErrorCode, type IncomingMessage, type Part } from "./protocol.js";

/** A message as the API serializes it (`type`, `content`, `id`, `tool_calls`, …). */
type WireMessage = Record<string, unknown>;

/** The graph input an A2A message makes: text parts become messages, data parts are merged into the input. */
export interface MessageInput {
  input: JsonObject;
  /** Text parts were given: the graph must take `messages`. */
  hasText: boolean;
  /** The data part `{resume}`, else the text: what resumes an interrupted thread. */
  resumeValue?: { value: unknown; from: "data" | "text" };
}

export function inputOf(message: IncomingMessage): MessageInput {
  if (message.parts.length === 0) throw new A2aError(A2aErrorCode.invalidParams, "Message must contain at least one part");
  const input: JsonObject = {};
  const messages: JsonObject[] = [];
  const texts: string[] = [];
  let resumeValue: MessageInput["resumeValue"];
  for (const part of message.parts) {
    if (part.kind === "text" && typeof part.text === "string") {
      texts.push(part.text);
      messages.push({
        role: message.role === "user" ? "human" : "assistant",
        content: part.text,
        id: messages.length === 0 ? message.messageId : `${message.messageId}-${messages.length}`,
      });
    } else if (part.kind === "data") {
      const data = (part as { data: unknown }).data;
      if (!isObject(data)) throw new A2aError(A2aErrorCode.contentTypeNotSupported, "Data parts must hold a JSON object");
      if ("resume" in data) resumeValue = { value: data.resume, from: "data" };
      Object.assign(input, data);
    } else {
      throw new A2aError(A2aErrorCode.contentTypeNotSupported, `Unsupported part kind: ${part.kind}`);
    }
  }
  if (messages.length > 0) input.messages = messages;
  if (!resumeValue && texts.length > 0) resumeValue = { value: texts.join("\n"), from: "text" };
  return { input, hasText: messages.length > 0, resumeValue };
}

/** The text of a message's content: a string, or its text blocks joined. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) => (typeof block === "string" ? block : isObject(block) && typeof block.text === "string" ? block.text : ""))
    .join("");
}

function isAgentType(type: unknown): boolean {
  return type === "ai" || type === "assistant" || type === "AIMessageChunk" || type === "AIMessage";
}

function isUserType(type: unknown): boolean {
  return type === "human" || type === "user" || type === "HumanMessage";
}

/** The messages of a thread's (or a checkpoint's) values. */
export function messagesOf(values: unknown): WireMessage[] {
  const messages = isObject(values) ? values.messages : undefined;
  return Array.isArray(messages) ? messages.filter(isObject) : [];
}

/** The reply: the last agent message, else the last message, else the values as JSON. */
export function finalText(values: unknown): string {
  const messages = messagesOf(values);
  const reply = messages.filter((message) => isAgentType(message.type ?? message.role)).at(-1) ?? messages.at(-1);
  if (reply) return contentText(reply.content);
  if (values === null || values === undefined) return "";
  return JSON.stringify(values);
}

/** A thread message as an A2A message of the task: the text, and tool calls or a tool's result as data. */
export function toA2aMessage(message: WireMessage, contextId: string, taskId: string): A2aMessage {
  const type = message.type ?? message.role;
  const parts: Part[] = [{ kind: "text", text: contentText(message.content) }];
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
    parts.push({ kind: "data", data: { tool_calls: message.tool_calls } });
  }
  if (type === "tool") parts.push({ kind: "data", data: { tool_results: [{ tool_call_id: message.tool_call_id }] } });
  return {
    kind: "message",
    role: isUserType(type) ? "user" : "agent",
    parts,
    messageId: typeof message.id === "string" ? message.id : randomUUID(),
    taskId,
    contextId,
  };
}

/** An agent message of one text part. */
export function agentMessage(text: string, contextId: string, taskId: string): A2aMessage {
  return { kind: "message", role: "agent", parts: [{ kind: "text", text }], messageId: randomUUID(), taskId, contextId };
}

/** The text and tool calls a streamed chunk carries, as an agent message (undefined: a chunk with neither). */
export function chunkMessage(chunk: unknown, contextId: string, taskId: string): A2aMessage | undefined {
  if (!isObject(chunk) || !isAgentType(chunk.type)) return undefined;
  const text = contentText(chunk.content);
  const toolCalls = Array.isArray(chunk.tool_calls) && chunk.tool_calls.length > 0 ? chunk.tool_calls : undefined;
  if (!text && !toolCalls) return undefined;
  const parts: Part[] = [{ kind: "text", text }];
  if (toolCalls) parts.push({ kind: "data", data: { tool_calls: toolCalls } });
  return {
    kind: "message",
    role: "agent",
    parts,
    messageId: typeof chunk.id === "string" ? chunk.id : randomUUID(),
    taskId,
    contextId,
  };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
