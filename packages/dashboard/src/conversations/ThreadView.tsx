import type { Client } from "@langchain/langgraph-sdk";
import type { ReactNode } from "react";
import { hrefOf } from "../router";
import { CopyButton } from "../ui/CopyButton";
import { InterruptPanel } from "./InterruptPanel";
import { pendingInterrupts } from "./interrupts";
import { liveMessages } from "./live-run";
import { LiveStatus } from "./LiveStatus";
import { stateMessages } from "./messages";
import { RunList } from "./RunList";
import { Section } from "./Section";
import { StateHistory } from "./StateHistory";
import { StatusBadge } from "./StatusBadge";
import { Transcript } from "./Transcript";
import { useAsync } from "./use-async";
import type { LiveRunControls } from "./use-live-run";

const HISTORY_LIMIT = 50;

interface ThreadViewProps {
  client: Client;
  threadId: string;
  live: LiveRunControls;
  /** Changes when a run starts or ends: the thread, its runs and its history reload. */
  refreshKey: number;
  /** The assistant a resumed run uses when the thread's runs do not tell. */
  fallbackAssistantId: string;
  /** The form that sends the next message, shown under the conversation. */
  composer: ReactNode;
  /** Assistants' names by id. */
  assistantNames: ReadonlyMap<string, string>;
  /** For the links to the Studio and to traces; without it there are none. */
  deploymentId: string | undefined;
}

/** One thread: its conversation (live while a run streams), the interrupt it waits on, its runs, its checkpoints. */
export function ThreadView(props: ThreadViewProps) {
  const { client, threadId, live, refreshKey, fallbackAssistantId, composer, assistantNames, deploymentId } = props;
  const details = useAsync(
    async (signal) => {
      const [thread, runs, history] = await Promise.all([
        client.threads.get(threadId, { signal }),
        client.runs.list(threadId, { limit: 50, signal }),
        client.threads.getHistory(threadId, { limit: HISTORY_LIMIT, signal }),
      ]);
      return { thread, runs, history };
    },
    [client, threadId, refreshKey],
  );
  const thread = details.data?.thread.thread_id === threadId ? details.data : undefined;
  const liveHere = live.run.threadId === threadId && live.run.phase !== "idle";
  const streaming = liveHere && (live.run.phase === "starting" || live.run.phase === "streaming");
  const interrupts = streaming ? [] : pendingInterrupts(thread?.thread, thread?.history[0]);
  const latestRun = thread?.runs.slice().sort((a, b) => b.created_at.localeCompare(a.created_at))[0];
  const metadataAssistant = thread?.thread.metadata?.assistant_id;
  const assistantId =
    latestRun?.assistant_id ?? (typeof metadataAssistant === "string" ? metadataAssistant : undefined) ?? fallbackAssistantId;

  const resume = (value: unknown) => live.start({ threadId, assistantId, command: { resume: value } });

  return (
    <div className="cb-thread-view">
      <h3>
        Thread <span className="cb-mono">{threadId}</span>{" "}
        {thread ? <StatusBadge status={thread.thread.status} label="Status" /> : null}
      </h3>
      <p className="cb-thread-actions">
        <CopyButton value={threadId} label="Copy thread id" />
        {assistantNames.get(assistantId) ? <span>Assistant: {assistantNames.get(assistantId)}</span> : null}
        {deploymentId ? <a href={hrefOf.studio(deploymentId, { assistantId, threadId })}>Open in Studio</a> : null}
      </p>
      {details.error ? (
        <p role="alert" className="cb-error">
          Could not load the thread: {details.error}
        </p>
      ) : null}
      <Section title="Conversation" className="cb-conversation">
        {liveHere ? <LiveStatus run={live.run} onStopWatching={live.stopWatching} /> : null}
        <Transcript
          messages={liveHere ? liveMessages(live.run) : stateMessages(thread?.thread.values)}
          streaming={streaming}
          assistantName={assistantNames.get(assistantId)}
        />
      </Section>
      {interrupts.length > 0 ? <InterruptPanel interrupts={interrupts} busy={streaming} onAnswer={resume} /> : null}
      {composer}
      <Section title="Runs">
        {thread ? (
          <RunList
            runs={thread.runs}
            watchedRunId={liveHere ? live.run.runId : null}
            onWatch={(runId) => live.watch(threadId, runId)}
            assistantNames={assistantNames}
            deploymentId={deploymentId}
          />
        ) : null}
      </Section>
      <Section title="State history">
        {thread ? <StateHistory states={thread.history} limited={thread.history.length >= HISTORY_LIMIT} /> : null}
      </Section>
    </div>
  );
}
