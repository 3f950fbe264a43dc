import {
  Background,
  BaseEdge,
  Controls,
  type Edge,
  type EdgeProps,
  Handle,
  MarkerType,
  type Node,
  type NodeHandle,
  type NodeProps,
  Position,
  ReactFlow,
} from "@xyflow/react";
import { type ReactNode, useMemo, useState } from "react";
import "@xyflow/react/dist/style.css";
import { type Drawing, END, layOut, START, shownId, subgraphsOf } from "./graph-layout";
import { messageText } from "./messages";
import type { NodeRun, NodeStatus, StudioRun } from "./run-state";

export interface GraphViewProps {
  /** The graph drawn with `xray` (every subgraph's nodes, namespaced); subgraphs start folded. */
  drawing: Drawing;
  run: StudioRun;
  /** Nodes to mark as next (the checkpoint picked in time travel, or where the thread stopped). */
  next: string[];
}

interface NodeData extends Record<string, unknown> {
  id: string;
  label: string;
  kind: "terminal" | "node" | "subgraph" | "group";
  status?: NodeStatus;
  update?: unknown;
  streamed?: string;
  next: boolean;
  onToggle?: () => void;
  /** Opens the node's whole update below the graph. */
  onOpen?: () => void;
}

type StudioNode = Node<NodeData>;

const PREVIEW_CHARS = 90;

/** The end of a text being streamed: the newest tokens are the ones to see. */
function tail(text: string): string {
  return text.length > PREVIEW_CHARS ? `…${text.slice(-(PREVIEW_CHARS - 1))}` : text;
}

/** An update in one line: the last message it wrote as text (the rest of it named), else its JSON. */
function preview(value: unknown): string {
  const { messages, ...rest } = (typeof value === "object" && value !== null ? value : {}) as { messages?: unknown };
  let text = JSON.stringify(value) ?? "";
  if (Array.isArray(messages) && messages.length > 0) {
    const last = messageText(messages.at(-1));
    const others = Object.keys(rest);
    text = `${last.type}: ${last.text}${others.length > 0 ? ` · ${others.join(", ")}` : ""}`;
  }
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}

const STATUS_TEXT: Record<NodeStatus, string> = {
  running: "running",
  done: "done",
  interrupted: "interrupted",
  error: "failed",
};

/** A button inside a node: a click on it neither drags nor picks the node. */
function InNodeButton(props: { className: string; label: string; onClick?: () => void; children: ReactNode }) {
  return (
    <button
      type="button"
      className={`nodrag ${props.className}`}
      aria-label={props.label}
      onClick={(event) => {
        event.stopPropagation();
        props.onClick?.();
      }}
    >
      {props.children}
    </button>
  );
}

function StepNode({ data }: NodeProps<StudioNode>) {
  const classes = ["studio-node", `studio-node-${data.kind}`];
  if (data.status) classes.push(`studio-node-${data.status}`);
  if (data.next) classes.push("studio-node-next");
  return (
    <div className={classes.join(" ")} data-testid={`studio-node-${data.id}`} data-status={data.status ?? "idle"}>
      {data.id !== START && <Handle type="target" position={Position.Top} isConnectable={false} />}
      <div className="studio-node-head">
        {data.onOpen ? (
          <InNodeButton className="studio-node-label" label={`Show the update of ${data.id}`} onClick={data.onOpen}>
            {data.label}
          </InNodeButton>
        ) : (
          <span className="studio-node-label">{data.label}</span>
        )}
        {data.status && <span className="studio-node-status">{STATUS_TEXT[data.status]}</span>}
        {!data.status && data.next && <span className="studio-node-status">next</span>}
      </div>
      {data.kind === "subgraph" && (
        <InNodeButton className="studio-toggle" label={`Expand subgraph ${data.id}`} onClick={data.onToggle}>
          expand
        </InNodeButton>
      )}
      {data.status === "running" && data.streamed ? (
        <code className="studio-node-update studio-node-streaming">{tail(data.streamed)}</code>
      ) : (
        data.update !== undefined && <code className="studio-node-update">{preview(data.update)}</code>
      )}
      {data.id !== END && <Handle type="source" position={Position.Bottom} isConnectable={false} />}
    </div>
  );
}

function GroupNode({ data }: NodeProps<StudioNode>) {
  const classes = ["studio-group"];
  if (data.status) classes.push(`studio-node-${data.status}`);
  if (data.next) classes.push("studio-node-next");
  return (
    <div className={classes.join(" ")} data-testid={`studio-group-${data.id}`}>
      <div className="studio-group-head">
        <span>subgraph {data.label}</span>
        <InNodeButton className="studio-toggle" label={`Collapse subgraph ${data.id}`} onClick={data.onToggle}>
          collapse
        </InNodeButton>
      </div>
    </div>
  );
}

const KIND_TEXT: Record<NodeData["kind"], string> = {
  terminal: "Terminal",
  node: "Node",
  subgraph: "Subgraph (folded)",
  group: "Subgraph",
};

type RoutedEdge = Edge<{ bends: { x: number; y: number }[] }>;

/**
 * An edge drawn through the bends dagre gave it, smoothed (each bend a quadratic curve's control point), so an
 * edge that skips a rank goes around the nodes between rather than behind them.
 */
function Routed({ sourceX, sourceY, targetX, targetY, data, label, markerEnd, style }: EdgeProps<RoutedEdge>) {
  const points = [{ x: sourceX, y: sourceY }, ...(data?.bends ?? []), { x: targetX, y: targetY }];
  let path = `M ${sourceX},${sourceY}`;
  for (let index = 1; index < points.length - 1; index++) {
    const bend = points[index]!;
    const after = points[index + 1]!;
    path += ` Q ${bend.x},${bend.y} ${(bend.x + after.x) / 2},${(bend.y + after.y) / 2}`;
  }
  path += ` L ${targetX},${targetY}`;
  const middle = points[Math.floor(points.length / 2)]!;
  return <BaseEdge path={path} label={label} labelX={middle.x} labelY={middle.y} markerEnd={markerEnd} style={style} />;
}

const EDGE_TYPES = { routed: Routed };

const NODE_TYPES = { step: StepNode, cluster: GroupNode };

const HANDLE_PX = 6;

/** A node's two handles where its Handle elements sit: the middle of its top (in) and of its bottom (out). */
function handlesOf(node: { id: string; width: number; height: number }): NodeHandle[] {
  const x = node.width / 2 - HANDLE_PX / 2;
  const handles: NodeHandle[] = [];
  if (node.id !== START)
    handles.push({ type: "target", position: Position.Top, x, y: -HANDLE_PX / 2, width: HANDLE_PX, height: HANDLE_PX });
  if (node.id !== END) {
    handles.push({
      type: "source",
      position: Position.Bottom,
      x,
      y: node.height - HANDLE_PX / 2,
      width: HANDLE_PX,
      height: HANDLE_PX,
    });
  }
  return handles;
}

const STATUS_RANK: Record<NodeStatus, number> = { done: 1, interrupted: 2, error: 3, running: 4 };

/** The status a shown node takes from the nodes folded in it: running wins over failed over interrupted over done. */
function foldStatus(shown: string, runs: Record<string, NodeRun>, open: ReadonlySet<string>): NodeRun | undefined {
  let folded: NodeRun | undefined = runs[shown];
  for (const [id, node] of Object.entries(runs)) {
    if (id === shown || shownId(id, open) !== shown) continue;
    if (!folded || STATUS_RANK[node.status] > STATUS_RANK[folded.status]) folded = { ...node, update: folded?.update };
  }
  return folded;
}

/**
 * The graph laid out top to bottom: terminals, nodes, subgraphs folded into one node until expanded,
 * conditional edges dashed. During a run the running node is marked and each node shows its latest update;
 * a click opens the whole update below.
 */
export function GraphView({ drawing, run, next }: GraphViewProps) {
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const [picked, setPicked] = useState<string | null>(null);
  const subgraphs = useMemo(() => subgraphsOf(drawing), [drawing]);
  const laidOut = useMemo(() => layOut(drawing, expanded), [drawing, expanded]);

  const toggle = (namespace: string) =>
    setExpanded((previous) => {
      const changed = new Set(previous);
      if (changed.has(namespace)) {
        for (const inner of previous) if (inner === namespace || inner.startsWith(`${namespace}:`)) changed.delete(inner);
      } else changed.add(namespace);
      return changed;
    });

  const nextShown = new Set(next.map((id) => shownId(id, expanded)));
  const nodes: StudioNode[] = laidOut.nodes.map((node) => {
    const state = foldStatus(node.id, run.nodes, expanded);
    const group = node.kind === "group";
    return {
      id: node.id,
      type: group ? "cluster" : "step",
      position: { x: node.x, y: node.y },
      width: node.width,
      height: node.height,
      // Sizes and handles given, not measured: a controlled node made anew on each update (a run's statuses) would
      // otherwise lose its measured handles, and its edges with them, until the browser measured it again.
      measured: { width: node.width, height: node.height },
      handles: group ? [] : handlesOf(node),
      parentId: node.parent,
      draggable: false,
      selectable: !group,
      className: group ? "studio-flow-group" : undefined,
      ariaLabel: `${KIND_TEXT[node.kind]} ${node.id}${state ? `: ${STATUS_TEXT[state.status]}` : ""}`,
      data: {
        id: node.id,
        label: node.id === START ? "start" : node.id === END ? "end" : node.label,
        kind: node.kind,
        status: state?.status,
        update: state?.update,
        streamed: state?.streamed,
        next: nextShown.has(node.id),
        onToggle: subgraphs.has(node.id) ? () => toggle(node.id) : undefined,
        onOpen: node.kind === "node" || node.kind === "subgraph" ? () => setPicked(node.id) : undefined,
      },
    };
  });
  const edges: RoutedEdge[] = laidOut.edges.map((edge) => ({
    id: edge.id,
    type: "routed",
    data: { bends: edge.bends },
    source: edge.source,
    target: edge.target,
    label: edge.conditional ? "conditional" : undefined,
    className: edge.conditional ? "studio-edge-conditional" : "studio-edge",
    ariaLabel: `${edge.conditional ? "Conditional edge" : "Edge"} from ${edge.source} to ${edge.target}`,
    markerEnd: { type: MarkerType.ArrowClosed },
    focusable: false,
  }));

  const pickedRun = picked ? foldStatus(picked, run.nodes, expanded) : undefined;
  return (
    <section className="studio-graph-panel" aria-label="Graph">
      <div className="studio-graph" data-testid="studio-graph">
        <ReactFlow
          key={[...expanded].sort().join(",")}
          nodes={nodes}
          edges={edges}
          nodeTypes={NODE_TYPES}
          edgeTypes={EDGE_TYPES}
          nodesDraggable={false}
          nodesConnectable={false}
          fitView
          fitViewOptions={{ maxZoom: 1.25 }}
          minZoom={0.2}
          onNodeClick={(_, node) => node.type === "step" && setPicked(node.id)}
        >
          <Background />
          <Controls showInteractive={false} />
        </ReactFlow>
      </div>
      <p className="studio-legend">
        Dashed edges are conditional: the node before them picks where the run goes. Click a node for its latest update.
      </p>
      {picked && (
        <section className="studio-node-detail" aria-label={`Node ${picked}`}>
          <h3>
            Node {picked}
            {pickedRun ? `: ${STATUS_TEXT[pickedRun.status]}` : ""}
          </h3>
          {pickedRun?.error && <p className="error">{pickedRun.error}</p>}
          {pickedRun?.update !== undefined ? (
            <pre>{JSON.stringify(pickedRun.update, null, 2)}</pre>
          ) : (
            <p className="studio-muted">No update from this node in the run shown.</p>
          )}
          <button type="button" onClick={() => setPicked(null)}>
            Close
          </button>
        </section>
      )}
    </section>
  );
}
