import type { Interrupt } from "@langchain/langgraph-sdk";
import { type FormEvent, useId, useState } from "react";
import { parseAnswer, showValue } from "./format";

interface InterruptPanelProps {
  interrupts: Interrupt[];
  busy: boolean;
  /** Resumes the thread with this value (the `interrupt()` call's return value). */
  onAnswer: (value: unknown) => void;
}

/** What the graph asked when it stopped, and a form to answer it. */
export function InterruptPanel({ interrupts, busy, onAnswer }: InterruptPanelProps) {
  const [text, setText] = useState("");
  const headingId = useId();
  const hintId = useId();

  const answer = (event: FormEvent) => {
    event.preventDefault();
    if (busy || text.trim() === "") return;
    onAnswer(parseAnswer(text));
    setText("");
  };

  return (
    <section className="cb-interrupt" aria-labelledby={headingId}>
      <h4 id={headingId}>Interrupt</h4>
      <p>The graph is waiting for an answer to:</p>
      {interrupts.map((interrupt, index) => (
        <pre key={interrupt.id ?? index} className="cb-interrupt-value">
          {showValue(interrupt.value)}
        </pre>
      ))}
      <form onSubmit={answer} aria-label="Answer the interrupt">
        <label>
          Your answer
          <textarea rows={3} value={text} aria-describedby={hintId} onChange={(event) => setText(event.target.value)} />
        </label>
        <p id={hintId} className="cb-muted">
          JSON (<code>{'{"approved": true}'}</code>, <code>42</code>) or plain text.
        </p>
        <button type="submit" disabled={busy || text.trim() === ""}>
          Resume
        </button>
      </form>
    </section>
  );
}
