import type { ThreadState } from "@langchain/langgraph-sdk";

/** The checkpoints of a thread as a tree: each one's parent and children (newest child first). */
export interface CheckpointTree {
  states: Map<string, ThreadState>;
  parent: Map<string, string | undefined>;
  children: Map<string, string[]>;
  /** Checkpoints whose parent is not loaded (the first one, or the oldest of what was paged in). */
  roots: string[];
  /** The thread's newest checkpoint: the one its state is read from. */
  latest: string | undefined;
}

/** One line of the timeline: a checkpoint, or the head of a branch that forks off the line it is drawn beside. */
export type TimelineRow =
  | { kind: "checkpoint"; id: string; state: ThreadState; depth: number; branches: number }
  | { kind: "branch"; id: string; depth: number; size: number; tip: ThreadState; from: ThreadState | undefined; open: boolean };

export function checkpointIdOf(state: ThreadState): string | undefined {
  return state.checkpoint?.checkpoint_id ?? undefined;
}

/**
 * Pages of history merged, newest first. Checkpoint ids are time-ordered (the server pages by them), and a
 * checkpoint never changes, so a page read again simply replaces its rows.
 */
export function mergeHistory(fresh: ThreadState[], kept: ThreadState[]): ThreadState[] {
  const byId = new Map<string, ThreadState>();
  for (const state of [...kept, ...fresh]) {
    const id = checkpointIdOf(state);
    if (id) byId.set(id, state);
  }
  return [...byId.entries()].sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0)).map(([, state]) => state);
}

/** The tree of `history` (newest first, as the server returns it). */
export function buildTree(history: ThreadState[]): CheckpointTree {
  const states = new Map<string, ThreadState>();
  for (const state of history) {
    const id = checkpointIdOf(state);
    if (id) states.set(id, state);
  }
  const parent = new Map<string, string | undefined>();
  const children = new Map<string, string[]>();
  const roots: string[] = [];
  for (const [id, state] of states) {
    const parentId = state.parent_checkpoint?.checkpoint_id ?? undefined;
    if (parentId && states.has(parentId)) {
      parent.set(id, parentId);
      // Newest first because `states` keeps the history's order.
      const siblings = children.get(parentId);
      if (siblings) siblings.push(id);
      else children.set(parentId, [id]);
    } else {
      parent.set(id, undefined);
      roots.push(id);
    }
  }
  return { states, parent, children, roots, latest: states.keys().next().value };
}

/** The checkpoints from `tip` up to its root. */
export function pathTo(tree: CheckpointTree, tip: string): Set<string> {
  const path = new Set<string>();
  for (let id: string | undefined = tip; id && !path.has(id); id = tree.parent.get(id)) path.add(id);
  return path;
}

/**
 * The line that starts at `start` and goes down, oldest first: at a fork it follows `pinned` (the path to the
 * tip the reader picked), else the newest child, as the SDK's branch view does.
 */
export function lineFrom(tree: CheckpointTree, start: string, pinned: Set<string>): string[] {
  const line = [start];
  const seen = new Set(line);
  for (let id = start; ; ) {
    const next = tree.children.get(id) ?? [];
    const chosen = next.find((child) => pinned.has(child)) ?? next[0];
    if (!chosen || seen.has(chosen)) return line;
    line.push(chosen);
    seen.add(chosen);
    id = chosen;
  }
}

function rootOf(tree: CheckpointTree, id: string): string {
  let root = id;
  for (let up = tree.parent.get(root); up && up !== id; up = tree.parent.get(root)) root = up;
  return root;
}

/**
 * The timeline's rows, newest at the top: the line through `tip` (the thread's latest checkpoint unless the reader
 * switched branch) at depth 0, and above each fork point the other branches growing from it, indented, each
 * listed whole unless its id is in `closed`.
 */
export function timelineRows(tree: CheckpointTree, tip: string | undefined, closed: ReadonlySet<string>): TimelineRow[] {
  const head = tip && tree.states.has(tip) ? tip : tree.latest;
  if (!head) return [];
  const pinned = pathTo(tree, head);
  const rows: TimelineRow[] = [];
  const emitBranch = (start: string, depth: number) => {
    const line = lineFrom(tree, start, pinned);
    const from = tree.parent.get(start);
    const open = !closed.has(start);
    const tipState = tree.states.get(line.at(-1)!)!;
    rows.push({
      kind: "branch",
      id: start,
      depth,
      size: line.length,
      tip: tipState,
      from: from ? tree.states.get(from) : undefined,
      open,
    });
    if (open) emitLine(line, depth);
  };
  const emitLine = (line: string[], depth: number) => {
    for (let index = line.length - 1; index >= 0; index--) {
      const id = line[index]!;
      const others = (tree.children.get(id) ?? []).filter((child) => child !== line[index + 1]);
      for (const child of others) emitBranch(child, depth + 1);
      rows.push({ kind: "checkpoint", id, state: tree.states.get(id)!, depth, branches: others.length });
    }
  };
  const mainRoot = rootOf(tree, head);
  emitLine(lineFrom(tree, mainRoot, pinned), 0);
  // Branches whose fork point is older than what is loaded yet.
  for (const root of tree.roots) if (root !== mainRoot) emitBranch(root, 1);
  return rows;
}

/**
 * The nodes that wrote a checkpoint: its `metadata.writes` keys where the server keeps them, else (a step of the
 * loop) the nodes its parent had next. An update does not record the node it was written as.
 */
export function writersOf(state: ThreadState, parent: ThreadState | undefined): string[] {
  const writes = state.metadata?.writes;
  if (writes && typeof writes === "object") return Object.keys(writes);
  return state.metadata?.source === "loop" && parent ? parent.next : [];
}

/** The loaded parent of a checkpoint. */
export function parentOf(tree: CheckpointTree, id: string): ThreadState | undefined {
  const parent = tree.parent.get(id);
  return parent ? tree.states.get(parent) : undefined;
}

/** The state keys whose values differ from the parent checkpoint's (every key, without a loaded parent). */
export function changedKeys(state: ThreadState, parent: ThreadState | undefined): string[] {
  const values = asObject(state.values);
  const before = asObject(parent?.values);
  const keys = new Set([...Object.keys(values), ...Object.keys(before)]);
  return [...keys].filter((key) => JSON.stringify(values[key]) !== JSON.stringify(before[key]));
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export type ParsedValues = { ok: true; values: Record<string, unknown> } | { ok: false; error: string };

/**
 * The edited state as an update: a JSON object, cut down to the keys that changed (a key sent unchanged would go
 * through its reducer again, e.g. a list that appends would repeat itself).
 */
export function parseEdit(text: string, before: unknown): ParsedValues {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `The state is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { ok: false, error: "The state must be a JSON object of state keys." };
  }
  const old = asObject(before);
  const changed = Object.fromEntries(
    Object.entries(parsed).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(old[key])),
  );
  if (Object.keys(changed).length === 0) return { ok: false, error: "Nothing changed: edit a value before saving." };
  return { ok: true, values: changed };
}
