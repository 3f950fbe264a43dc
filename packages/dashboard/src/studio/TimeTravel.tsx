import type { Client, ThreadState } from "@langchain/langgraph-sdk";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, useState } from "react";
import { errorText } from "../conversations/client";
import { Time } from "../ui/Time";
import { useCheckpointHistory } from "./time-travel-history";
import { CheckpointPanel } from "./time-travel-panel";
import {
  buildTree,
  type CheckpointTree,
  checkpointIdOf,
  parentOf,
  type TimelineRow,
  timelineRows,
  writersOf,
} from "./time-travel-tree";
import "./time-travel.css";

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

/** Each row's height before it is measured: two lines of text. */
const ROW_PX = 52;

const picked = (state: ThreadState): PickedCheckpoint => ({
  checkpointId: checkpointIdOf(state) ?? "",
  next: state.next,
  values: state.values,
});

/** The graph's own nodes (without its start and end), for the "as node" picker; none when the graph is unreadable. */
function useGraphNodes(client: Client, assistantId: string): string[] {
  const [nodes, setNodes] = useState<string[]>([]);
  useEffect(() => {
    const controller = new AbortController();
    client.assistants.getGraph(assistantId, { signal: controller.signal }).then(
      (graph) => setNodes(graph.nodes.map((node) => String(node.id)).filter((id) => !id.startsWith("__"))),
      // The writers seen in the history stand in for the graph's nodes.
      () => !controller.signal.aborted && setNodes([]),
    );
    return () => controller.abort();
  }, [client, assistantId]);
  return nodes;
}

/** The thread's checkpoints as a timeline with its forks as branches; open, edit and run again from any of them. */
export function TimeTravel({ client, threadId, assistantId, version, onRunFrom, onSelect }: TimeTravelProps) {
  const history = useCheckpointHistory(client, threadId, version);
  const graphNodes = useGraphNodes(client, assistantId);
  /** The tip of the branch shown as the main line; undefined follows the thread's latest checkpoint. */
  const [tip, setTip] = useState<string | undefined>(undefined);
  const [closed, setClosed] = useState<ReadonlySet<string>>(new Set());
  const [openId, setOpenId] = useState<string | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);

  // A run ended or the thread changed: back to the thread's latest branch.
  // biome-ignore lint/correctness/useExhaustiveDependencies: these are the signals, not inputs
  useEffect(() => setTip(undefined), [version, threadId]);
  // The latest `onSelect`, for the effect below that runs on a new thread only.
  const select = useRef(onSelect);
  useEffect(() => {
    select.current = onSelect;
  }, [onSelect]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new thread closes the checkpoint of the last one
  useEffect(() => {
    setOpenId(undefined);
    setClosed(new Set());
    setNotice(undefined);
    select.current?.(undefined);
  }, [threadId]);

  const tree = useMemo(() => buildTree(history.states), [history.states]);
  const rows = useMemo(() => timelineRows(tree, tip, closed), [tree, tip, closed]);
  const nodes = useMemo(() => {
    const all = new Set(graphNodes);
    for (const [id, state] of tree.states) for (const writer of writersOf(state, parentOf(tree, id))) all.add(writer);
    all.delete("__input__");
    all.delete("__start__");
    return [...all];
  }, [graphNodes, tree]);
  const open = openId ? tree.states.get(openId) : undefined;

  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_PX,
    overscan: 12,
    getItemKey: (index) => `${rows[index]!.kind}:${rows[index]!.id}`,
  });

  const openCheckpoint = (state: ThreadState | undefined) => {
    const id = state ? checkpointIdOf(state) : undefined;
    setOpenId(id);
    setNotice(undefined);
    onSelect?.(state ? picked(state) : undefined);
  };
  const toggleBranch = (id: string) =>
    setClosed((previous) => {
      const next = new Set(previous);
      if (!next.delete(id)) next.add(id);
      return next;
    });

  const save = async (values: Record<string, unknown>, asNode: string | undefined) => {
    if (!openId) return;
    const from = tree.states.get(openId);
    let created: string | undefined;
    try {
      const answer = await client.threads.updateState(threadId, { values, asNode, checkpointId: openId });
      created = answer.configurable?.checkpoint_id as string | undefined;
    } catch (failure) {
      throw new Error(errorText(failure));
    }
    // The new checkpoint is the thread's latest: its branch becomes the main line.
    setTip(undefined);
    const merged = await history.refresh();
    const state = merged?.find((candidate) => checkpointIdOf(candidate) === created);
    openCheckpoint(state ?? from);
    setNotice(
      state
        ? `Saved as a new checkpoint forked from step ${from?.metadata?.step ?? "?"}; run from here to go on from the edit.`
        : "Saved; the new checkpoint shows once the history is read again.",
    );
  };

  const switched = tip !== undefined && tip !== tree.latest;
  return (
    <section aria-label="Time travel" className="time-travel">
      <header className="tt-head">
        <h2>Time travel</h2>
        <span className="tt-muted">
          {history.states.length} checkpoint{history.states.length === 1 ? "" : "s"}
          {history.loading ? " · reading…" : ""}
        </span>
      </header>
      {switched ? (
        <p className="tt-switched">
          Showing another branch.{" "}
          <button type="button" onClick={() => setTip(undefined)}>
            Back to the latest
          </button>
        </p>
      ) : null}
      {history.error ? (
        <p role="alert" className="error">
          {history.error}
        </p>
      ) : null}
      {!history.loading && rows.length === 0 && !history.error ? <p>No checkpoints yet.</p> : null}
      <div className="tt-scroll" ref={scroller}>
        <ol aria-label="Checkpoints, newest first" className="tt-timeline" style={{ height: virtual.getTotalSize() }}>
          {virtual.getVirtualItems().map((item) => {
            const row = rows[item.index]!;
            return (
              <li
                key={item.key}
                data-index={item.index}
                ref={virtual.measureElement}
                className={`tt-row tt-${row.kind}${row.depth > 0 ? " tt-forked" : ""}`}
                style={{ transform: `translateY(${item.start}px)`, paddingLeft: `${0.25 + row.depth * 1.25}rem` }}
              >
                {row.kind === "checkpoint" ? (
                  <CheckpointRow row={row} tree={tree} open={row.id === openId} onPick={openCheckpoint} />
                ) : (
                  <BranchRow row={row} onToggle={toggleBranch} onSwitch={(id) => setTip(id)} />
                )}
              </li>
            );
          })}
        </ol>
      </div>
      {history.hasOlder ? (
        <button type="button" onClick={history.loadOlder} disabled={history.loading}>
          Load older checkpoints
        </button>
      ) : null}
      {open ? (
        <CheckpointPanel
          key={openId}
          state={open}
          parent={openId ? parentOf(tree, openId) : undefined}
          nodes={nodes}
          notice={notice}
          onSave={save}
          onRunFrom={(checkpointId) => {
            // The graph follows the run from here on, not the checkpoint it started from.
            openCheckpoint(undefined);
            onRunFrom(checkpointId);
          }}
          onClose={() => openCheckpoint(undefined)}
        />
      ) : null}
    </section>
  );
}

function CheckpointRow({
  row,
  tree,
  open,
  onPick,
}: {
  row: Extract<TimelineRow, { kind: "checkpoint" }>;
  tree: CheckpointTree;
  open: boolean;
  onPick: (state: ThreadState | undefined) => void;
}) {
  const { state } = row;
  const source = state.metadata?.source ?? "";
  const writers = writersOf(state, parentOf(tree, row.id));
  return (
    <button
      type="button"
      className="tt-pick"
      aria-expanded={open}
      title={checkpointIdOf(state)}
      onClick={() => onPick(open ? undefined : state)}
    >
      <span className="tt-dot" aria-hidden="true" />
      <span className="tt-step">step {state.metadata?.step ?? "?"}</span>
      <span className={`tt-source tt-source-${source}`}>{source || "?"}</span>
      <span className="tt-muted tt-when">
        <Time iso={state.created_at} />
      </span>
      <span className="tt-flow">
        <span className="tt-writes">{writers.length > 0 ? `by ${writers.join(", ")}` : source === "update" ? "edited" : ""}</span>{" "}
        <span className="tt-next">{state.next.length > 0 ? `next ${state.next.join(", ")}` : "end"}</span>
        {row.branches > 0 ? <span className="tt-forkpoint"> · fork point of {row.branches + 1} branches</span> : null}
      </span>
    </button>
  );
}

function BranchRow({
  row,
  onToggle,
  onSwitch,
}: {
  row: Extract<TimelineRow, { kind: "branch" }>;
  onToggle: (id: string) => void;
  onSwitch: (tipId: string) => void;
}) {
  const from = row.from ? `step ${row.from.metadata?.step ?? "?"}` : "an older checkpoint";
  const tipId = checkpointIdOf(row.tip);
  return (
    <>
      <button type="button" className="tt-branch-toggle" aria-expanded={row.open} onClick={() => onToggle(row.id)}>
        <span aria-hidden="true">{row.open ? "▾" : "▸"}</span> Fork from {from}: {row.size} checkpoint
        {row.size === 1 ? "" : "s"}, up to step {row.tip.metadata?.step ?? "?"}
      </button>
      {tipId ? (
        <button type="button" className="tt-switch" onClick={() => onSwitch(tipId)}>
          Switch to this branch
        </button>
      ) : null}
    </>
  );
}
