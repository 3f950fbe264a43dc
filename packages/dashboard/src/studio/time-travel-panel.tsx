import type { ThreadState } from "@langchain/langgraph-sdk";
import { type FormEvent, useState } from "react";
import { showValue } from "../conversations/format";
import { CopyButton } from "../ui/CopyButton";
import { Time } from "../ui/Time";
import { changedKeys, checkpointIdOf, parseEdit, writersOf } from "./time-travel-tree";

export interface CheckpointPanelProps {
  state: ThreadState;
  /** Its parent, when loaded: what ran from there wrote this one. */
  parent: ThreadState | undefined;
  /** The nodes an edit can be written as (the graph's, and those seen writing checkpoints). */
  nodes: string[];
  /** Writes the edit as a new checkpoint forked from this one; rejects with a reader-facing message. */
  onSave: (values: Record<string, unknown>, asNode: string | undefined) => Promise<void>;
  onRunFrom: (checkpointId: string) => void;
  onClose: () => void;
  /** Said after a save: where the edit went. */
  notice?: string;
}

const stepOf = (state: ThreadState) => state.metadata?.step;

/** One checkpoint opened: its values, what runs next, its tasks and interrupts; edit it or run again from it. */
export function CheckpointPanel({ state, parent, nodes, onSave, onRunFrom, onClose, notice }: CheckpointPanelProps) {
  const id = checkpointIdOf(state) ?? "";
  const writers = writersOf(state, parent);
  const changed = changedKeys(state, parent);
  const [draft, setDraft] = useState<{ text: string; asNode: string } | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  const startEdit = () => {
    setError(null);
    setDraft({ text: JSON.stringify(state.values, null, 2) ?? "{}", asNode: writers[0] ?? nodes[0] ?? "" });
  };
  const save = async (event: FormEvent) => {
    event.preventDefault();
    if (!draft) return;
    const parsed = parseEdit(draft.text, state.values);
    if (!parsed.ok) {
      setError(parsed.error);
      return;
    }
    setSaving(true);
    setError(null);
    try {
      await onSave(parsed.values, draft.asNode || undefined);
      setDraft(undefined);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setSaving(false);
    }
  };
  const interrupts = state.tasks.flatMap((task) => task.interrupts.map((interrupt) => ({ task: task.name, interrupt })));
  const failed = state.tasks.filter((task) => task.error);

  return (
    <section aria-label="Checkpoint" className="tt-panel">
      <header className="tt-panel-head">
        <h3>
          Step {stepOf(state) ?? "?"} · {state.metadata?.source ?? "checkpoint"}
        </h3>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </header>
      {notice ? (
        <p role="status" className="tt-notice">
          {notice}
        </p>
      ) : null}
      <dl className="tt-facts">
        <dt>Checkpoint</dt>
        <dd>
          <span className="tt-mono">{id}</span> <CopyButton value={id} label="Copy checkpoint id" />
        </dd>
        <dt>Written by</dt>
        <dd>{writers.length > 0 ? writers.join(", ") : state.metadata?.source === "update" ? "an edit" : "—"}</dd>
        <dt>Changed</dt>
        <dd>{changed.length > 0 ? changed.join(", ") : "nothing"}</dd>
        <dt>Next</dt>
        <dd>{state.next.length > 0 ? state.next.join(", ") : "nothing (the run ended here)"}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={state.created_at} />
        </dd>
      </dl>
      {interrupts.length > 0 ? (
        <div className="tt-interrupts">
          <h4>Interrupts</h4>
          {interrupts.map(({ task, interrupt }, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: an interrupt has no id of its own before resume
            <div key={index}>
              <span className="tt-muted">{task}:</span> <pre className="tt-values">{showValue(interrupt.value)}</pre>
            </div>
          ))}
        </div>
      ) : null}
      {failed.length > 0 ? (
        <div className="tt-errors">
          <h4>Errors</h4>
          {failed.map((task) => (
            <p key={task.id} className="error">
              {task.name}: {task.error}
            </p>
          ))}
        </div>
      ) : null}
      {draft ? (
        <form className="tt-edit" aria-label="Edit state" onSubmit={save}>
          <label>
            State values (JSON)
            <textarea
              value={draft.text}
              spellCheck={false}
              rows={14}
              onChange={(event) => {
                setDraft({ ...draft, text: event.target.value });
                setError(null);
              }}
            />
          </label>
          <label>
            As node
            <select value={draft.asNode} onChange={(event) => setDraft({ ...draft, asNode: event.target.value })}>
              {nodes.length === 0 ? <option value="">(the graph decides)</option> : null}
              {nodes.map((node) => (
                <option key={node} value={node}>
                  {node}
                </option>
              ))}
            </select>
          </label>
          {error ? (
            <p role="alert" className="error">
              {error}
            </p>
          ) : null}
          <p className="hint">Saving writes a new checkpoint forked from this one; this one stays as it is.</p>
          <div className="tt-actions">
            <button type="submit" disabled={saving}>
              {saving ? "Saving…" : "Save"}
            </button>
            <button type="button" onClick={() => setDraft(undefined)} disabled={saving}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <>
          <section aria-label="State values">
            <h4>State</h4>
            <pre className="tt-values">{showValue(state.values)}</pre>
          </section>
          <div className="tt-actions">
            <button type="button" onClick={startEdit}>
              Edit state
            </button>
            <button
              type="button"
              onClick={() => onRunFrom(id)}
              disabled={state.next.length === 0}
              title={state.next.length === 0 ? "Nothing runs after this checkpoint" : undefined}
            >
              Run from here
            </button>
          </div>
        </>
      )}
    </section>
  );
}
