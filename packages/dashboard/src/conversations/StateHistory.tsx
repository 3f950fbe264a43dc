import type { ThreadState } from "@langchain/langgraph-sdk";
import { Time } from "../ui/Time";
import { showValue } from "./format";

/**
 * The thread's checkpoints, newest first: the whole list folds away (closed at first: a long chat leaves many),
 * and each checkpoint opens to the state values it holds.
 */
export function StateHistory({ states, limited }: { states: ThreadState[]; limited: boolean }) {
  if (states.length === 0) return <p>No checkpoints yet.</p>;
  const count = `${limited ? "the latest " : ""}${states.length} ${states.length === 1 ? "checkpoint" : "checkpoints"}`;
  return (
    <details className="cb-history-all">
      <summary>Show {count}</summary>
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
                  {state.created_at ? (
                    <span className="cb-muted">
                      {" · "}
                      <Time iso={state.created_at} />
                    </span>
                  ) : null}
                </summary>
                <pre className="cb-values">{showValue(state.values)}</pre>
              </details>
            </li>
          );
        })}
      </ol>
    </details>
  );
}
