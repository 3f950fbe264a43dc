import type { ThreadState } from "@langchain/langgraph-sdk";
import { showTime, showValue } from "./format";

/** The thread's checkpoints, newest first, each expandable to the state values it holds. */
export function StateHistory({ states }: { states: ThreadState[] }) {
  if (states.length === 0) return <p>No checkpoints yet.</p>;
  return (
    <ol className="cb-history" aria-label="Checkpoints, newest first">
      {states.map((state, index) => {
        const id = state.checkpoint?.checkpoint_id ?? `checkpoint-${index}`;
        const step = state.metadata?.step;
        const source = state.metadata?.source;
        return (
          <li key={id}>
            <details>
              <summary>
                {/* Whole: checkpoint ids of one thread share their leading (time) digits. */}
                Checkpoint <span className="cb-mono">{id}</span>
                {step === undefined ? null : <> · step {step}</>}
                {source ? <> · {source}</> : null}
                {" · next: "}
                {state.next.length > 0 ? state.next.join(", ") : "none"}
                {state.created_at ? <span className="cb-muted"> · {showTime(state.created_at)}</span> : null}
              </summary>
              <pre className="cb-values">{showValue(state.values)}</pre>
            </details>
          </li>
        );
      })}
    </ol>
  );
}
