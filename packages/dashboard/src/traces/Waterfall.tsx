import { useVirtualizer } from "@tanstack/react-virtual";
import { useMemo, useRef, useState } from "react";
import { formatDuration } from "../ui/time";
import { formatTokens, latencyOf, type Span } from "./trace-api";

const ROW_PX = 30;

interface Row {
  span: Span;
  /** Has spans under it (the next span in dotted order is deeper). */
  parent: boolean;
}

/**
 * The spans still shown once the collapsed ones hide their subtrees. Spans
 * come in dotted order, so a subtree is the run of deeper spans after it.
 */
function visibleRows(spans: Span[], collapsed: ReadonlySet<string>): Row[] {
  const rows: Row[] = [];
  let hideDeeperThan = Number.POSITIVE_INFINITY;
  for (let index = 0; index < spans.length; index++) {
    const span = spans[index]!;
    if (span.depth > hideDeeperThan) continue;
    hideDeeperThan = Number.POSITIVE_INFINITY;
    const parent = (spans[index + 1]?.depth ?? -1) > span.depth;
    rows.push({ span, parent });
    if (parent && collapsed.has(span.id)) hideDeeperThan = span.depth;
  }
  return rows;
}

/** The time window of the trace: from the first start to the last end (a span still running ends at its start). */
function windowOf(spans: Span[]): { start: number; length: number } {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const span of spans) {
    if (!span.start_time) continue;
    const from = Date.parse(span.start_time);
    start = Math.min(start, from);
    end = Math.max(end, span.end_time ? Date.parse(span.end_time) : from);
  }
  if (!Number.isFinite(start)) return { start: 0, length: 1 };
  return { start, length: Math.max(1, end - start) };
}

/**
 * The trace as a waterfall: one row per span, indented by depth, with a bar
 * placed by its start and sized by its latency within the whole trace.
 * Virtualised: only the rows in view (and a few around) are in the page.
 */
export function Waterfall({
  spans,
  selected,
  onSelect,
}: {
  spans: Span[];
  selected: string | undefined;
  onSelect: (span: Span) => void;
}) {
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const rows = useMemo(() => visibleRows(spans, collapsed), [spans, collapsed]);
  const frame = useMemo(() => windowOf(spans), [spans]);
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_PX,
    overscan: 12,
  });

  const toggle = (id: string) =>
    setCollapsed((current) => {
      const next = new Set(current);
      if (!next.delete(id)) next.add(id);
      return next;
    });

  return (
    <div className="waterfall" data-testid="waterfall">
      <div className="waterfall-head" aria-hidden="true">
        <span>Span</span>
        <span>Timeline</span>
        <span>Latency</span>
        <span>Tokens</span>
      </div>
      <div ref={scroller} className="waterfall-scroll" role="tree" aria-label="Spans of the trace" data-testid="waterfall-scroll">
        <div className="waterfall-canvas" style={{ height: virtualizer.getTotalSize() }}>
          {virtualizer.getVirtualItems().map((item) => {
            const { span, parent } = rows[item.index]!;
            const latency = latencyOf(span);
            const offset = span.start_time ? (Date.parse(span.start_time) - frame.start) / frame.length : 0;
            const width = latency === null ? 1 - offset : latency / frame.length;
            const open = parent && !collapsed.has(span.id);
            return (
              <div
                key={span.id}
                role="treeitem"
                aria-level={span.depth + 1}
                aria-expanded={parent ? open : undefined}
                aria-selected={selected === span.id}
                tabIndex={0}
                data-testid="span-row"
                data-span-id={span.id}
                className={`waterfall-row${selected === span.id ? " selected" : ""}`}
                style={{ transform: `translateY(${item.start}px)`, height: ROW_PX }}
                onClick={() => onSelect(span)}
                onKeyDown={(event) => {
                  if (event.key === "Enter" || event.key === " ") {
                    event.preventDefault();
                    onSelect(span);
                  } else if (parent && (event.key === "ArrowLeft" || event.key === "ArrowRight")) {
                    if ((event.key === "ArrowLeft") === open) toggle(span.id);
                  }
                }}
              >
                <span className="span-label" style={{ paddingLeft: `${span.depth * 14}px` }}>
                  {parent ? (
                    <button
                      type="button"
                      className="span-toggle"
                      aria-label={open ? `Collapse ${span.name ?? "span"}` : `Expand ${span.name ?? "span"}`}
                      onClick={(event) => {
                        event.stopPropagation();
                        toggle(span.id);
                      }}
                    >
                      {open ? "▾" : "▸"}
                    </button>
                  ) : (
                    <span className="span-toggle" />
                  )}
                  <span className={`span-kind kind-${span.run_type ?? "other"}`}>{span.run_type ?? "run"}</span>
                  <span className="span-name" title={span.name ?? undefined}>
                    {span.name ?? span.id}
                  </span>
                  {span.status !== "success" && <span className={`trace-status ${span.status}`}>{span.status}</span>}
                </span>
                <span className="span-track">
                  <span
                    className={`span-bar ${span.status}`}
                    style={{ left: `${Math.min(100, offset * 100)}%`, width: `max(2px, ${Math.max(0, width) * 100}%)` }}
                  />
                </span>
                <span className="number">{latency === null ? "…" : formatDuration(latency)}</span>
                <span className="number">{span.total_tokens == null ? "" : formatTokens(span.total_tokens)}</span>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
