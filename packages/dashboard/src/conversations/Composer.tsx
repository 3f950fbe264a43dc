import type { Assistant } from "@langchain/langgraph-sdk";
import { type FormEvent, type KeyboardEvent, useId, useState } from "react";

interface ComposerProps {
  assistants: Assistant[];
  assistantId: string;
  onAssistantChange: (assistantId: string) => void;
  /** While a run streams, sending waits. */
  busy: boolean;
  onSend: (text: string) => void;
}

/** Picks the assistant (a graph of the deployment) and sends a human message to it; Ctrl+Enter sends too. */
export function Composer({ assistants, assistantId, onAssistantChange, busy, onSend }: ComposerProps) {
  const [text, setText] = useState("");
  const hintId = useId();
  const canSend = !busy && text.trim() !== "" && assistantId !== "";

  const send = (event?: FormEvent) => {
    event?.preventDefault();
    if (!canSend) return;
    onSend(text.trim());
    setText("");
  };
  const sendOnCtrlEnter = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) send(event);
  };

  return (
    <form className="cb-composer" aria-label="Send a message" onSubmit={send}>
      <label>
        Assistant
        <select value={assistantId} onChange={(event) => onAssistantChange(event.target.value)}>
          {assistants.map((assistant) => (
            <option key={assistant.assistant_id} value={assistant.assistant_id}>
              {assistant.name === assistant.graph_id ? assistant.name : `${assistant.name} (graph ${assistant.graph_id})`}
            </option>
          ))}
        </select>
      </label>
      <label>
        Message
        <textarea
          rows={3}
          value={text}
          aria-describedby={hintId}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={sendOnCtrlEnter}
        />
      </label>
      <p id={hintId} className="cb-muted">
        Sent as a human message in the input's <code>messages</code>. Ctrl+Enter sends.
      </p>
      <button type="submit" disabled={!canSend}>
        Send
      </button>
    </form>
  );
}
