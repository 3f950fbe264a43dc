import type { AssistantVersion, Client, ThreadState } from "@langchain/langgraph-sdk";
import { useCallback, useEffect, useMemo, useState } from "react";
import { deploymentClient, errorText } from "../conversations/client";
import { useAsync } from "../conversations/use-async";
import { hashQuery, hrefOf } from "../router";
import { CopyButton } from "../ui/CopyButton";
import { ErrorNote } from "../ui/ErrorNote";
import { GraphView } from "./GraphView";
import { type Drawing, END, START } from "./graph-layout";
import { editorErrors } from "./ObjectEditor";
import { ResultView } from "./ResultView";
import { type RunSettings, RunPanel } from "./RunPanel";
import { NO_RUN, runningNodes } from "./run-state";
import { StopPanel } from "./StopPanel";
import { nodesOfHistory } from "./thread-nodes";
import { loadSettings, saveSettings } from "./settings-store";
import { asSchema, parseObject, takesMessages } from "./schema";
import { type PickedCheckpoint, TimeTravel } from "./TimeTravel";
import { type StudioRunRequest, useStudioRun } from "./use-studio-run";
import "./studio.css";

export interface StudioProps {
  deploymentId: string;
  /** The deployment's stable URL on the router (api/platform.ts). */
  deploymentUrl: string;
  apiKey: string;
  tenantId?: string;
}

interface Opened {
  assistantId: string;
  threadId: string;
}

function openedFromHash(): Opened {
  const query = hashQuery();
  return { assistantId: query.get("assistant") ?? "", threadId: query.get("thread") ?? "" };
}

const EMPTY_SETTINGS: RunSettings = { config: "{}", context: "{}", input: "{}", interruptBefore: [], interruptAfter: [] };

function settingsOf(version: { config?: { configurable?: unknown }; context?: unknown }, kept: RunSettings): RunSettings {
  const text = (value: unknown) => JSON.stringify(value ?? {}, null, 2);
  return { ...kept, config: text(version.config?.configurable), context: text(version.context) };
}

/** The graph drawn with every subgraph's nodes; a graph that cannot be drawn so is drawn plain. */
async function drawingOf(client: Client, assistantId: string, signal: AbortSignal): Promise<Drawing> {
  try {
    return await client.assistants.getGraph(assistantId, { xray: true, signal });
  } catch (error) {
    if (signal.aborted) throw error;
    return client.assistants.getGraph(assistantId, { signal });
  }
}

/**
 * The Studio: an assistant's graph, a run panel whose runs stream onto the graph (running node, each node's
 * update), the stop at an interrupt or a breakpoint and its answer, and the thread's time travel beside it.
 * The assistant and thread opened are kept in the hash's query, so a reload keeps them.
 */
export function Studio({ deploymentId, deploymentUrl, apiKey, tenantId }: StudioProps) {
  const client = useMemo(() => deploymentClient({ deploymentUrl, apiKey, tenantId }), [deploymentUrl, apiKey, tenantId]);
  const [opened, setOpened] = useState(openedFromHash);
  useEffect(() => {
    const onChange = () => setOpened(openedFromHash());
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  const open = useCallback(
    (next: Opened) => {
      // Replaced, not pushed: the query follows the page rather than making history of every thread.
      window.history.replaceState(null, "", hrefOf.studio(deploymentId, next));
      setOpened(next);
    },
    [deploymentId],
  );

  const assistants = useAsync((signal) => client.assistants.search({ limit: 100, signal }), [client]);
  const threadId = opened.threadId || null;
  // A thread opened without an assistant (a link from a trace) runs with the one it ran with.
  const threadOwner = useAsync(
    async (signal) => {
      if (!threadId || opened.assistantId) return undefined;
      const metadata = (await client.threads.get(threadId, { signal })).metadata as Record<string, unknown> | null;
      return { assistantId: metadata?.assistant_id, graphId: metadata?.graph_id };
    },
    [client, threadId, opened.assistantId],
  );
  const owner = assistants.data?.find(
    (candidate) =>
      candidate.assistant_id === threadOwner.data?.assistantId ||
      (candidate.graph_id === threadOwner.data?.graphId && candidate.name === candidate.graph_id),
  );
  const waitingForOwner = Boolean(threadId && !opened.assistantId && threadOwner.loading);
  const assistantId =
    opened.assistantId || (waitingForOwner ? "" : owner?.assistant_id || assistants.data?.[0]?.assistant_id || "");
  const graph = useAsync(
    async (signal) => {
      if (!assistantId) return undefined;
      const [drawing, schemas, versions] = await Promise.all([
        drawingOf(client, assistantId, signal),
        client.assistants.getSchemas(assistantId, { signal }),
        client.assistants.getVersions(assistantId, { limit: 50, signal }).catch((): AssistantVersion[] => []),
      ]);
      return { assistantId, drawing, schemas, versions };
    },
    [client, assistantId],
  );
  const loaded = graph.data?.assistantId === assistantId ? graph.data : undefined;

  const [settings, setSettings] = useState<RunSettings>(EMPTY_SETTINGS);
  const [version, setVersion] = useState<number>();
  const assistant = assistants.data?.find((candidate) => candidate.assistant_id === assistantId);
  // A newly picked assistant starts from its own config and context; breakpoints name its own nodes.
  useEffect(() => {
    if (!assistant) return;
    setSettings(loadSettings(deploymentId, assistant.assistant_id) ?? settingsOf(assistant, EMPTY_SETTINGS));
    setVersion(assistant.version);
  }, [assistant, deploymentId]);
  const changeSettings = (changed: RunSettings) => {
    setSettings(changed);
    saveSettings(deploymentId, assistantId, changed);
  };

  const [ended, setEnded] = useState(0);
  const runner = useStudioRun(
    client,
    useCallback(() => setEnded((count) => count + 1), []),
  );
  const busy = runner.run.phase === "starting" || runner.run.phase === "streaming";
  const [picked, setPicked] = useState<PickedCheckpoint>();
  // Read again whenever a run ends or a checkpoint is opened: an edit saved in the time travel is a new latest state.
  const state = useAsync(
    (signal): Promise<ThreadState | undefined> =>
      threadId ? client.threads.getState(threadId, undefined, { signal }) : Promise.resolve(undefined),
    [client, threadId, ended, picked?.checkpointId],
  );
  // The graph shows the live run while it is the open thread's; else what the thread's nodes last wrote.
  const live = runner.run.threadId === threadId ? runner.run : NO_RUN;
  const history = useAsync(
    async (signal) => (threadId ? nodesOfHistory(await client.threads.getHistory(threadId, { limit: 100, signal })) : undefined),
    [client, threadId, ended, picked?.checkpointId],
  );
  // While a run streams, its own nodes only; once it ended, over what the others wrote before.
  const streaming = live.phase === "starting" || live.phase === "streaming";
  const shownRun = streaming ? live : { ...live, nodes: { ...history.data, ...live.nodes } };
  const [startError, setStartError] = useState<string | null>(null);

  const schemas = {
    config: asSchema(loaded?.schemas.config_schema),
    context: asSchema(loaded?.schemas.context_schema),
    input: asSchema(loaded?.schemas.input_schema),
  };
  const chat = takesMessages(schemas.input);
  const errors = [
    ...editorErrors(settings.config, schemas.config),
    ...(schemas.context ? editorErrors(settings.context, schemas.context) : []),
    ...editorErrors(settings.input, schemas.input),
  ];
  const nodes = (loaded?.drawing.nodes ?? [])
    .map((node) => String(node.id))
    .filter((id) => id !== START && id !== END && !id.includes(":"))
    .concat(
      // A subgraph is a node of its parent: the xray drawing names it only in its nodes' namespaces.
      (loaded?.drawing.nodes ?? []).map((node) => String(node.id).split(":")[0]!),
    )
    .filter((id, index, all) => id !== START && id !== END && all.indexOf(id) === index);

  /** Streams a run with the panel's config, context and breakpoints; starts a thread when none is open. */
  const runWith = async (request: Pick<StudioRunRequest, "input" | "command" | "checkpointId">) => {
    setStartError(null);
    setPicked(undefined);
    const configurable = parseObject(settings.config);
    const context = parseObject(settings.context);
    try {
      const thread = threadId ?? (await client.threads.create({ graphId: assistant?.graph_id })).thread_id;
      if (thread !== threadId) open({ assistantId, threadId: thread });
      runner.start({
        ...request,
        threadId: thread,
        assistantId,
        config:
          "value" in configurable && Object.keys(configurable.value).length > 0
            ? { configurable: configurable.value }
            : undefined,
        context: schemas.context && "value" in context && Object.keys(context.value).length > 0 ? context.value : undefined,
        interruptBefore: settings.interruptBefore,
        interruptAfter: settings.interruptAfter,
      });
    } catch (error) {
      setStartError(errorText(error));
    }
  };

  const cancel = async (thread: string, runId: string) => {
    try {
      await client.runs.cancel(thread, runId);
    } catch (error) {
      setStartError(errorText(error));
    }
  };

  const makeLatest = async (picked: number) => {
    setStartError(null);
    try {
      await client.assistants.setLatest(assistantId, picked);
      assistants.reload();
    } catch (error) {
      setStartError(errorText(error));
    }
  };

  const onRun = (message: string) => {
    const parsed = parseObject(settings.input);
    if (!("value" in parsed)) return;
    const input = parsed.value;
    const text = message.trim();
    if (chat && text) input.messages = [{ type: "human", content: text }];
    // Nothing to send on an open thread: it goes on from where it stopped.
    void runWith({ input: Object.keys(input).length > 0 || !threadId ? input : null });
  };
  // As Run does: this render's config, context and breakpoints.
  const onRunFrom = (checkpointId: string) => void runWith({ input: null, checkpointId });

  const stoppedAt = !busy && state.data ? state.data.next : [];
  const next = picked?.next ?? (busy ? [] : stoppedAt);
  const running = runningNodes(live);

  return (
    <div className="studio">
      <ErrorNote error={assistants.error ?? undefined} />
      {assistants.data?.length === 0 && <p>This deployment has no assistants to run.</p>}
      <div className="studio-layout">
        <RunPanel
          assistants={assistants.data ?? []}
          assistantId={assistantId}
          onAssistant={(id) => open({ assistantId: id, threadId: "" })}
          versions={loaded?.versions ?? []}
          version={version}
          latestVersion={assistant?.version}
          onMakeLatest={(picked) => void makeLatest(picked)}
          onVersion={(picked) => {
            setVersion(picked.version);
            changeSettings(settingsOf(picked, settings));
          }}
          schemas={schemas}
          chat={chat}
          nodes={nodes}
          settings={settings}
          onSettings={changeSettings}
          blocked={errors.length > 0 || !loaded}
          busy={busy}
          threadId={threadId}
          onRun={onRun}
          onNewThread={() => open({ assistantId, threadId: "" })}
        />
        <div className="studio-center">
          <div className="studio-thread">
            {threadId ? (
              <>
                Thread <code>{threadId}</code> <CopyButton value={threadId} label="Copy thread id" />
              </>
            ) : (
              "No thread open: Run starts one."
            )}
          </div>
          <p role="status" className="studio-status" data-testid="studio-status">
            {statusText(live.phase, running, live.error, stoppedAt, state.data)}
          </p>
          <div className="studio-run-links">
            {busy && threadId && live.runId && (
              <button type="button" onClick={() => void cancel(threadId, live.runId!)}>
                Cancel the run
              </button>
            )}
            {!busy && live.runId && <a href={hrefOf.trace(deploymentId, live.runId)}>Trace of the last run</a>}
          </div>
          <ErrorNote error={startError ?? graph.error ?? undefined} />
          {loaded ? (
            <GraphView drawing={loaded.drawing} run={shownRun} next={next} />
          ) : (
            graph.loading && <p>Loading the graph…</p>
          )}
          {threadId && state.data && !busy && (
            <StopPanel
              state={state.data}
              onResume={(resume) => void runWith({ input: null, command: { resume } })}
              onContinue={() => void runWith({ input: null })}
            />
          )}
          {threadId && state.data && <ResultView values={state.data.values} />}
        </div>
        {threadId && assistantId && (
          <aside className="studio-side">
            <TimeTravel
              client={client}
              threadId={threadId}
              assistantId={assistantId}
              version={ended}
              onRunFrom={onRunFrom}
              onSelect={setPicked}
            />
          </aside>
        )}
      </div>
    </div>
  );
}

function statusText(
  phase: string,
  running: string[],
  error: string | null,
  stoppedAt: string[],
  state: ThreadState | undefined,
): string {
  if (phase === "starting") return "Starting the run…";
  if (phase === "streaming") return running.length > 0 ? `Running: ${running.join(", ")}` : "Running…";
  if (phase === "failed") return `The run failed: ${error ?? "no reason given"}`;
  if (!state) return phase === "ended" ? "Finished" : "Ready";
  const interrupted = state.tasks.some((task) => task.interrupts.length > 0);
  if (interrupted) return "Stopped at an interrupt: waiting for an answer";
  if (stoppedAt.length > 0) return `Stopped at a breakpoint; next: ${stoppedAt.join(", ")}`;
  return phase === "ended" ? "Finished" : "Ready";
}
