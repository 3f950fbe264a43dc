import { useMemo } from "react";
import { showValue } from "./format";
import { MarkdownText } from "./Markdown";
import { type MessageKind, pairToolResults, type ShownMessage } from "./messages";
import { ToolCall } from "./ToolCall";

interface TranscriptProps {
  messages: ShownMessage[];
  /** While tokens arrive, screen readers wait for the end (aria-busy) rather than reading each token. */
  streaming: boolean;
  /** The assistant's name, shown on its messages (else "Assistant"). */
  assistantName?: string;
}

/** A class per author, for the message's look (the text label says who it is). */
const LOOK: Record<MessageKind, string> = { human: "you", ai: "assistant", tool: "tool", system: "system", other: "other" };

/** A conversation's messages, each with who said it as text; tool calls show with their answers under them. */
export function Transcript({ messages, streaming, assistantName }: TranscriptProps) {
  const paired = useMemo(() => pairToolResults(messages), [messages]);
  if (paired.length === 0) return <p className="cb-muted">No messages.</p>;
  return (
    <ol className="cb-transcript" aria-live="polite" aria-busy={streaming}>
      {paired.map((message) => (
        <li key={message.id} className={`cb-message cb-message-${LOOK[message.kind]}`}>
          <span className="cb-role">{roleOf(message, assistantName)}</span>
          <MessageBody message={message} streaming={streaming} />
        </li>
      ))}
    </ol>
  );
}

function roleOf(message: ShownMessage, assistantName: string | undefined): string {
  if (message.kind === "ai") return assistantName || message.role;
  if (message.kind === "tool" && message.name) return `Tool ${message.name}`;
  return message.role;
}

function MessageBody({ message, streaming }: { message: ShownMessage; streaming: boolean }) {
  const empty = message.text === "" && message.otherParts.length === 0 && message.toolCalls.length === 0;
  return (
    <>
      {message.text ? <MarkdownText className="cb-text" text={message.text} /> : null}
      {message.otherParts.map((part, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: parts have no id and keep their order
        <pre key={index} className="cb-json">
          {showValue(part)}
        </pre>
      ))}
      {message.toolCalls.map((call) => (
        <ToolCall key={call.id} call={call} running={streaming} />
      ))}
      {empty ? <p className="cb-muted">{streaming ? "…" : "(empty message)"}</p> : null}
    </>
  );
}
