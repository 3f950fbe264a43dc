import { Graph, layout } from "@dagrejs/dagre";

/** A graph as `GET /assistants/{id}/graph` draws it (ids of subgraph nodes are namespaced: `research:search`). */
export interface Drawing {
  nodes: { id: string | number; data?: unknown }[];
  edges: { source: string; target: string; conditional?: boolean }[];
}

export const START = "__start__";
export const END = "__end__";

export interface ShownNode {
  /** The node's id in the drawing, or a subgraph's namespace. */
  id: string;
  /** The last segment of the id: what the node is called inside its graph. */
  label: string;
  kind: "terminal" | "node" | "subgraph" | "group";
  /** The expanded subgraph that holds it. */
  parent?: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface ShownEdge {
  id: string;
  source: string;
  target: string;
  conditional: boolean;
  /** The bends dagre routed the edge through (around the nodes in its way), between its two ends. */
  bends: { x: number; y: number }[];
}

export interface Layout {
  nodes: ShownNode[];
  edges: ShownEdge[];
}

const NODE = { width: 180, height: 58 };
const TERMINAL = { width: 100, height: 32 };

/** The subgraphs of a drawing made with `xray`: every namespace a node id is under (`a`, `a:b` for `a:b:c`). */
export function subgraphsOf(xray: Drawing): Set<string> {
  const namespaces = new Set<string>();
  for (const node of xray.nodes) {
    const parts = String(node.id).split(":");
    for (let depth = 1; depth < parts.length; depth++) namespaces.add(parts.slice(0, depth).join(":"));
  }
  return namespaces;
}

/** Where a node of the xray drawing shows: itself, or the outermost subgraph holding it that is not expanded. */
export function shownId(id: string, expanded: ReadonlySet<string>): string {
  const parts = id.split(":");
  for (let depth = 1; depth < parts.length; depth++) {
    const namespace = parts.slice(0, depth).join(":");
    if (!expanded.has(namespace)) return namespace;
  }
  return id;
}

/**
 * The xray drawing with the subgraphs not in `expanded` folded into one node each, laid out top to bottom by
 * dagre; an expanded subgraph becomes a group around its nodes.
 */
export function layOut(xray: Drawing, expanded: ReadonlySet<string>): Layout {
  const subgraphs = subgraphsOf(xray);
  const open = new Set([...expanded].filter((namespace) => subgraphs.has(namespace)));
  const shown = new Map<string, Omit<ShownNode, "x" | "y" | "width" | "height">>();
  for (const node of xray.nodes) {
    const id = shownId(String(node.id), open);
    if (shown.has(id)) continue;
    const label = id.split(":").at(-1) ?? id;
    const kind = id === START || id === END ? "terminal" : subgraphs.has(id) ? "subgraph" : "node";
    shown.set(id, { id, label, kind, parent: parentOf(id) });
  }
  for (const namespace of open)
    shown.set(namespace, {
      id: namespace,
      label: namespace.split(":").at(-1) ?? namespace,
      kind: "group",
      parent: parentOf(namespace),
    });

  const edges = new Map<string, ShownEdge>();
  for (const edge of xray.edges) {
    const source = shownId(edge.source, open);
    const target = shownId(edge.target, open);
    if (source === target) continue;
    const id = `${source}->${target}`;
    const conditional = Boolean(edge.conditional) || Boolean(edges.get(id)?.conditional);
    edges.set(id, { id, source, target, conditional, bends: [] });
  }

  const graph = new Graph({ compound: true });
  graph.setGraph({ rankdir: "TB", nodesep: 36, ranksep: 44, marginx: 16, marginy: 16 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of shown.values()) {
    const size = node.kind === "terminal" ? TERMINAL : node.kind === "group" ? {} : NODE;
    graph.setNode(node.id, { ...size });
  }
  for (const node of shown.values()) if (node.parent && shown.has(node.parent)) graph.setParent(node.id, node.parent);
  // dagre lays out edges between leaves: an edge drawn to a group is laid out to nothing.
  for (const edge of edges.values()) {
    if (shown.get(edge.source)?.kind !== "group" && shown.get(edge.target)?.kind !== "group") {
      graph.setEdge(edge.source, edge.target, {});
    }
  }
  layout(graph);

  const placed = new Map<string, ShownNode>();
  for (const node of shown.values()) {
    const box = graph.node(node.id) as { x: number; y: number; width: number; height: number };
    placed.set(node.id, { ...node, x: box.x - box.width / 2, y: box.y - box.height / 2, width: box.width, height: box.height });
  }
  // React Flow places a child relative to its parent, and wants parents listed before their children.
  const nodes = [...placed.values()]
    .map((node) => {
      const parent = node.parent ? placed.get(node.parent) : undefined;
      return parent ? { ...node, x: node.x - parent.x, y: node.y - parent.y } : node;
    })
    .sort((a, b) => depthOf(a.id) - depthOf(b.id));
  const routed = [...edges.values()].map((edge) => {
    const points = graph.hasEdge(edge.source, edge.target)
      ? (graph.edge(edge.source, edge.target) as { points?: { x: number; y: number }[] }).points
      : undefined;
    return { ...edge, bends: points?.slice(1, -1) ?? [] };
  });
  return { nodes, edges: routed };
}

function parentOf(id: string): string | undefined {
  const at = id.lastIndexOf(":");
  return at === -1 ? undefined : id.slice(0, at);
}

function depthOf(id: string): number {
  return id.split(":").length;
}

/**
 * The node of the full drawing a streamed event is about: the event's namespace (`research:<task id>` segments
 * after its mode, `updates|research:1f…`) names the subgraphs, the node is the last step.
 */
export function nodeOfEvent(event: string, node: string): string {
  const namespace = event
    .split("|")
    .slice(1)
    .map((segment) => segment.split(":")[0]);
  return [...namespace, node].join(":");
}
