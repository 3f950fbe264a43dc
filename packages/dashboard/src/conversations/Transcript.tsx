import type { ShownMessage } from "./messages";

interface TranscriptProps {
  messages: ShownMessage[];
  /** While tokens arrive, screen readers wait for the end (aria-busy) rather than reading each token. */
  streaming: boolean;
}

/** A conversation's messages, each with who said it as text. */
export function Transcript({ messages, streaming }: TranscriptProps) {
  if (messages.length === 0) return <p className="cb-muted">No messages.</p>;
  return (
    <ol className="cb-transcript" aria-live="polite" aria-busy={streaming}>
      {messages.map((message) => (
        <li key={message.id} className={`cb-message cb-message-${message.role.toLowerCase()}`}>
          <span className="cb-role">{message.role}</span>
          <p className="cb-text">{message.text}</p>
        </li>
      ))}
    </ol>
  );
}
