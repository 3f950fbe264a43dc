import { useCallback, useMemo, useState } from "react";
import { deploymentClient, errorText } from "./client";
import { Composer } from "./Composer";
import { deploymentIdOf } from "./format";
import { ThreadList } from "./ThreadList";
import { ThreadView } from "./ThreadView";
import { useAsync } from "./use-async";
import { useLiveRun } from "./use-live-run";
import "./conversations.css";

export interface ConversationBrowserProps {
  /** The deployment's stable URL on the router (api/platform.ts), e.g. http://127.0.0.1:8080/d/<id>. */
  deploymentUrl: string;
  /** The control plane API key the user entered; the router accepts it for the deployment's agent server. */
  apiKey: string;
  /** X-Tenant-Id, for a key that reaches several workspaces. */
  tenantId?: string;
  /** The deployment's id, for links to its Studio and traces; read from `deploymentUrl` when not given. */
  deploymentId?: string;
}

/**
 * A deployment's conversations, read from its agent server through the router with the official SDK:
 * threads (searched by status and metadata), a thread's runs and state history, a composer whose runs
 * stream into the page token by token, and the answer to an interrupt.
 */
export function ConversationBrowser({ deploymentUrl, apiKey, tenantId, deploymentId }: ConversationBrowserProps) {
  const client = useMemo(() => deploymentClient({ deploymentUrl, apiKey, tenantId }), [deploymentUrl, apiKey, tenantId]);
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [refreshKey, setRefreshKey] = useState(0);
  const [chosenAssistant, setChosenAssistant] = useState("");
  const [sendError, setSendError] = useState<string | null>(null);
  const refresh = useCallback(() => setRefreshKey((key) => key + 1), []);
  const live = useLiveRun(client, refresh);
  const assistants = useAsync((signal) => client.assistants.search({ limit: 100, signal }), [client]);
  const assistantId = chosenAssistant || assistants.data?.[0]?.assistant_id || "";
  const assistantNames = useMemo(
    () => new Map((assistants.data ?? []).map((assistant) => [assistant.assistant_id, assistant.name])),
    [assistants.data],
  );
  const linkId = deploymentId ?? deploymentIdOf(deploymentUrl);
  const streaming = live.run.phase === "starting" || live.run.phase === "streaming";

  const send = async (text: string) => {
    setSendError(null);
    try {
      const threadId = selectedId ?? (await client.threads.create()).thread_id;
      setSelectedId(threadId);
      live.start({ threadId, assistantId, input: { messages: [{ type: "human", content: text }] } });
    } catch (error) {
      setSendError(errorText(error));
    }
  };

  const composer = (
    <>
      {assistants.error ? (
        <p role="alert" className="cb-error">
          Could not list the deployment's assistants: {assistants.error}
        </p>
      ) : null}
      {assistants.data?.length === 0 ? <p>This deployment has no assistants to run.</p> : null}
      <Composer
        assistants={assistants.data ?? []}
        assistantId={assistantId}
        onAssistantChange={setChosenAssistant}
        busy={streaming}
        onSend={(text) => void send(text)}
      />
      {sendError ? (
        <p role="alert" className="cb-error">
          Could not start the conversation: {sendError}
        </p>
      ) : null}
    </>
  );

  return (
    <div className="cb-browser">
      <h2>Conversations</h2>
      <p className="cb-muted">
        Agent server at <span className="cb-mono">{deploymentUrl}</span>
      </p>
      <div className="cb-layout">
        <div className="cb-sidebar">
          <button type="button" onClick={() => setSelectedId(null)} aria-pressed={selectedId === null}>
            New conversation
          </button>
          <ThreadList
            client={client}
            selectedId={selectedId}
            onSelect={setSelectedId}
            refreshKey={refreshKey}
            assistantNames={assistantNames}
          />
        </div>
        <div className="cb-main">
          {selectedId ? (
            <ThreadView
              client={client}
              threadId={selectedId}
              live={live}
              refreshKey={refreshKey}
              fallbackAssistantId={assistantId}
              composer={composer}
              assistantNames={assistantNames}
              deploymentId={linkId}
            />
          ) : (
            <section className="cb-new" aria-label="New conversation">
              <h3>New conversation</h3>
              <p className="cb-muted">Sending a message starts a new thread.</p>
              {composer}
            </section>
          )}
        </div>
      </div>
    </div>
  );
}
