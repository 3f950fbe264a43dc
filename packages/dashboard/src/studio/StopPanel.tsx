import type { ThreadState } from "@langchain/langgraph-sdk";
import { useState } from "react";

export interface StopPanelProps {
  state: ThreadState;
  /** Answers the graph's `interrupt()`: a run with `command: {resume}`. */
  onResume: (answer: unknown) => void;
  /** Goes on past a breakpoint: a run with no input. */
  onContinue: () => void;
}

/** An answer as typed: JSON when it reads as a JSON object or array, else the text. */
function answerOf(text: string): unknown {
  if (/^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // not JSON after all: sent as text
    }
  }
  return text;
}

function questionOf(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  const question = (value as { question?: unknown } | null)?.question;
  return typeof question === "string" ? question : undefined;
}

/**
 * Where the thread stopped: at the graph's own `interrupt()` (its value, and an answer that resumes the run)
 * or at a breakpoint (the nodes next, and Continue).
 */
export function StopPanel({ state, onResume, onContinue }: StopPanelProps) {
  const [answer, setAnswer] = useState("");
  const interrupts = state.tasks.flatMap((task) => task.interrupts.map((interrupt) => ({ task: task.name, interrupt })));
  if (interrupts.length > 0) {
    return (
      <section className="studio-stop" aria-label="Interrupt">
        <h3>Interrupted</h3>
        {interrupts.map(({ task, interrupt }, index) => {
          const question = questionOf(interrupt.value);
          return (
            <div key={interrupt.id ?? index}>
              <p>
                Node <strong>{task}</strong> asks: {question ?? ""}
              </p>
              {question === undefined && <pre>{JSON.stringify(interrupt.value, null, 2)}</pre>}
            </div>
          );
        })}
        <label className="studio-field">
          Your answer
          <textarea rows={2} value={answer} onChange={(event) => setAnswer(event.target.value)} />
        </label>
        <button
          type="button"
          className="primary"
          onClick={() => {
            onResume(answerOf(answer));
            setAnswer("");
          }}
        >
          Resume
        </button>
      </section>
    );
  }
  if (state.next.length === 0) return null;
  return (
    <section className="studio-stop" aria-label="Breakpoint">
      <h3>Paused at a breakpoint</h3>
      <p>
        Next: <strong>{state.next.join(", ")}</strong>
      </p>
      <button type="button" className="primary" onClick={onContinue}>
        Continue
      </button>
    </section>
  );
}
