import { nodeOfEvent } from "./graph-layout.js";

/** Where a node is in the run shown: started and not ended, ended, stopped at an interrupt, failed. */
export type NodeStatus = "running" | "done" | "interrupted" | "error";

export interface NodeRun {
  status: NodeStatus;
  /** The node's latest update (what it wrote to the state), when it sent one. */
  update?: unknown;
  /** The text a chat model called in the node has streamed so far (`messages` events), while the node runs. */
  streamed?: string;
  error?: string;
}

export type RunPhase = "idle" | "starting" | "streaming" | "ended" | "failed";

export interface StudioRun {
  phase: RunPhase;
  /** The thread the run is on. */
  threadId: string | null;
  runId: string | null;
  /** By node id in the full (xray) drawing: `research:search` for a subgraph's node. */
  nodes: Record<string, NodeRun>;
  /** The last state the root graph streamed. */
  values: unknown;
  error: string | null;
}

export const NO_RUN: StudioRun = { phase: "idle", threadId: null, runId: null, nodes: {}, values: undefined, error: null };

export type RunEvent =
  | { kind: "start"; threadId: string }
  | { kind: "part"; event: string; data: unknown }
  | { kind: "end" }
  | { kind: "fail"; error: string };

type Dict = Record<string, unknown>;
const isDict = (value: unknown): value is Dict => typeof value === "object" && value !== null && !Array.isArray(value);

/** A chunk's text: its content as a string, or the text of its content blocks (some providers stream blocks). */
function textOf(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  return content.map((block: unknown) => (isDict(block) && typeof block.text === "string" ? block.text : "")).join("");
}

/** Folds a run's stream (modes `values`, `updates` and `tasks`, with subgraphs) into what the graph shows. */
export function runReducer(run: StudioRun, event: RunEvent): StudioRun {
  switch (event.kind) {
    case "start":
      return { ...NO_RUN, phase: "starting", threadId: event.threadId };
    case "end":
      return run.phase === "failed" ? run : { ...run, phase: "ended", nodes: settled(run.nodes) };
    case "fail":
      return { ...run, phase: "failed", error: event.error, nodes: settled(run.nodes) };
    case "part":
      return withPart({ ...run, phase: run.phase === "starting" ? "streaming" : run.phase }, event.event, event.data);
  }
}

function withPart(run: StudioRun, event: string, data: unknown): StudioRun {
  const mode = event.split("|")[0];
  if (mode === "metadata" && isDict(data) && typeof data.run_id === "string") return { ...run, runId: data.run_id };
  if (mode === "error") {
    const message = isDict(data) && typeof data.message === "string" ? data.message : JSON.stringify(data);
    return { ...run, phase: "failed", error: message };
  }
  if (mode === "values" && event === "values" && isDict(data) && !("__interrupt__" in data)) return { ...run, values: data };
  if (mode === "updates" && isDict(data)) {
    const nodes = { ...run.nodes };
    for (const [name, update] of Object.entries(data)) {
      if (name === "__interrupt__") continue;
      const id = nodeOfEvent(event, name);
      nodes[id] = { ...nodes[id], status: nodes[id]?.status ?? "done", update };
    }
    return { ...run, nodes };
  }
  if (mode === "messages" && Array.isArray(data)) {
    const [chunk, metadata] = data as [unknown, unknown];
    const node = isDict(metadata) ? metadata.langgraph_node : undefined;
    const content = isDict(chunk) ? textOf(chunk.content) : undefined;
    if (typeof node !== "string" || !content) return run;
    const id = nodeOfEvent(event, node);
    const previous = run.nodes[id];
    return {
      ...run,
      nodes: {
        ...run.nodes,
        [id]: { ...previous, status: previous?.status ?? "running", streamed: (previous?.streamed ?? "") + content },
      },
    };
  }
  if (mode === "tasks" && isDict(data) && typeof data.name === "string") {
    const id = nodeOfEvent(event, data.name);
    const previous = run.nodes[id];
    if ("input" in data || "triggers" in data) {
      // A node that starts again streams its text afresh.
      return { ...run, nodes: { ...run.nodes, [id]: { ...previous, status: "running", streamed: undefined } } };
    }
    const interrupted = Array.isArray(data.interrupts) && data.interrupts.length > 0;
    const error = typeof data.error === "string" && data.error ? data.error : undefined;
    const status: NodeStatus = error ? "error" : interrupted ? "interrupted" : "done";
    return { ...run, nodes: { ...run.nodes, [id]: { ...previous, status, error } } };
  }
  return run;
}

/** Once the stream ends no node runs any more (one cut short by a breakpoint or a failure is left as it was). */
function settled(nodes: Record<string, NodeRun>): Record<string, NodeRun> {
  return Object.fromEntries(
    Object.entries(nodes).map(([id, node]) => [id, node.status === "running" ? { ...node, status: "done" } : node]),
  );
}

/** The nodes running now, by the full drawing's ids. */
export function runningNodes(run: StudioRun): string[] {
  return Object.entries(run.nodes)
    .filter(([, node]) => node.status === "running")
    .map(([id]) => id);
}
