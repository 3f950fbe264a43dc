import type { Assistant, AssistantVersion } from "@langchain/langgraph-sdk";
import { useState } from "react";
import { ObjectEditor } from "./ObjectEditor";
import type { Schema } from "./schema";

export interface RunSettings {
  config: string;
  context: string;
  /** The input's JSON, for a graph whose input is no conversation. */
  input: string;
  interruptBefore: string[];
  interruptAfter: string[];
}

export interface RunPanelProps {
  assistants: Assistant[];
  assistantId: string;
  onAssistant: (assistantId: string) => void;
  versions: AssistantVersion[];
  version: number | undefined;
  /** The assistant's current version, the one its runs use. */
  latestVersion: number | undefined;
  onMakeLatest: (version: number) => void;
  onVersion: (version: AssistantVersion) => void;
  schemas: { config?: Schema; context?: Schema; input?: Schema };
  chat: boolean;
  /** The graph's own nodes, for breakpoints. */
  nodes: string[];
  settings: RunSettings;
  onSettings: (settings: RunSettings) => void;
  /** Problems that keep Run off. */
  blocked: boolean;
  busy: boolean;
  threadId: string | null;
  onRun: (message: string) => void;
  onNewThread: () => void;
}

function toggled(list: string[], node: string, on: boolean): string[] {
  return on ? [...list.filter((name) => name !== node), node] : list.filter((name) => name !== node);
}

/** What a run is given: the assistant and its version, config and context, the input, breakpoints. */
export function RunPanel(props: RunPanelProps) {
  const { settings, onSettings } = props;
  const [message, setMessage] = useState("");
  const set = (change: Partial<RunSettings>) => onSettings({ ...settings, ...change });
  const run = () => {
    if (props.blocked || props.busy) return;
    props.onRun(message);
    setMessage("");
  };
  return (
    <section className="studio-run-panel" aria-label="Run">
      <h2>Run</h2>
      <label className="studio-field">
        Assistant
        <select value={props.assistantId} onChange={(event) => props.onAssistant(event.target.value)}>
          {props.assistants.map((assistant) => (
            <option key={assistant.assistant_id} value={assistant.assistant_id}>
              {assistant.name === assistant.graph_id ? assistant.name : `${assistant.name} (graph ${assistant.graph_id})`}
            </option>
          ))}
        </select>
      </label>
      {props.versions.length > 0 && (
        <label className="studio-field">
          Version
          <select
            value={props.version ?? ""}
            onChange={(event) => {
              const picked = props.versions.find((version) => version.version === Number(event.target.value));
              if (picked) props.onVersion(picked);
            }}
          >
            {props.versions.map((version) => (
              <option key={version.version} value={version.version}>
                Version {version.version}
                {version.version === props.latestVersion ? " (latest)" : ""}
              </option>
            ))}
          </select>
        </label>
      )}
      {props.version !== undefined && props.latestVersion !== undefined && props.version !== props.latestVersion && (
        <div className="studio-note" role="note">
          <p>
            The editors hold version {props.version}'s config and context. A run uses the latest version's, with these on top; to
            run version {props.version} as it was, make it the latest.
          </p>
          <button type="button" onClick={() => props.version !== undefined && props.onMakeLatest(props.version)}>
            Make version {props.version} the latest
          </button>
        </div>
      )}
      <ObjectEditor label="Config" schema={props.schemas.config} text={settings.config} onText={(config) => set({ config })} />
      {props.schemas.context && (
        <ObjectEditor
          label="Context"
          schema={props.schemas.context}
          text={settings.context}
          onText={(context) => set({ context })}
        />
      )}
      <fieldset className="studio-breakpoints">
        <legend>Breakpoints</legend>
        {(["interruptBefore", "interruptAfter"] as const).map((when) => (
          <fieldset key={when} aria-label={when === "interruptBefore" ? "Interrupt before" : "Interrupt after"}>
            <legend>{when === "interruptBefore" ? "Interrupt before" : "Interrupt after"}</legend>
            {props.nodes.map((node) => (
              <label key={node} className="studio-check">
                <input
                  type="checkbox"
                  checked={settings[when].includes(node)}
                  onChange={(event) => set({ [when]: toggled(settings[when], node, event.target.checked) })}
                />
                {node}
              </label>
            ))}
          </fieldset>
        ))}
      </fieldset>
      {props.chat ? (
        <>
          <label className="studio-field">
            Message
            <textarea
              rows={3}
              value={message}
              placeholder="Ctrl+Enter runs"
              onChange={(event) => setMessage(event.target.value)}
              onKeyDown={(event) => {
                if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
                  event.preventDefault();
                  run();
                }
              }}
            />
          </label>
          <details className="studio-more-input">
            <summary>Other input keys</summary>
            <ObjectEditor
              label="Input"
              schema={props.schemas.input}
              text={settings.input}
              onText={(input) => set({ input })}
              rows={3}
            />
          </details>
        </>
      ) : (
        <ObjectEditor
          label="Input"
          schema={props.schemas.input}
          text={settings.input}
          onText={(input) => set({ input })}
          rows={5}
        />
      )}
      <div className="studio-actions">
        <button type="button" className="primary" disabled={props.blocked || props.busy} onClick={run}>
          {props.threadId ? "Run on this thread" : "Run on a new thread"}
        </button>
        {props.threadId && (
          <button type="button" onClick={props.onNewThread} disabled={props.busy}>
            New thread
          </button>
        )}
      </div>
    </section>
  );
}
