import type { Client, Thread, ThreadStatus } from "@langchain/langgraph-sdk";
import { useVirtualizer } from "@tanstack/react-virtual";
import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import { Time } from "../ui/Time";
import { parseMetadataFilter, shortId } from "./format";
import { StatusBadge } from "./StatusBadge";
import { threadAssistant, threadPreview, threadTitle } from "./threads";
import { type ThreadFilter, type ThreadPages, useThreadPages } from "./use-thread-pages";

const STATUSES: ThreadStatus[] = ["idle", "busy", "interrupted", "error"];
/** A row's height before it is measured (three lines of text and padding). */
const ROW_PX = 88;
/** The next page is fetched when the rows drawn come this close to the last one loaded. */
const PREFETCH_ROWS = 10;

interface ThreadListProps {
  client: Client;
  selectedId: string | null;
  onSelect: (threadId: string) => void;
  /** Changes when a run starts or ends: the list reloads to show new threads and statuses. */
  refreshKey: number;
  /** Assistants' names by id. */
  assistantNames: ReadonlyMap<string, string>;
}

/**
 * The deployment's threads, most recently updated first, filtered by status and metadata: fetched a page at a
 * time as the list is scrolled (or with "Load more threads"), and only the rows in view are drawn.
 */
export function ThreadList({ client, selectedId, onSelect, refreshKey, assistantNames }: ThreadListProps) {
  const [filter, setFilter] = useState<ThreadFilter>({});
  const [status, setStatus] = useState("");
  const [metadata, setMetadata] = useState("");
  const [formError, setFormError] = useState<string | null>(null);
  const headingId = useId();
  const errorId = useId();
  const pages = useThreadPages(client, filter, refreshKey);

  const search = (event: FormEvent) => {
    event.preventDefault();
    try {
      setFilter({ status: (status || undefined) as ThreadStatus | undefined, metadata: parseMetadataFilter(metadata) });
      setFormError(null);
    } catch (error) {
      setFormError((error as Error).message);
    }
  };

  return (
    <section className="cb-threads" aria-labelledby={headingId}>
      <h3 id={headingId}>Threads</h3>
      <search aria-label="Search threads">
        <form className="cb-search" onSubmit={search}>
          <label>
            Status
            <select value={status} onChange={(event) => setStatus(event.target.value)}>
              <option value="">Any status</option>
              {STATUSES.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Metadata (JSON)
            <input
              type="text"
              value={metadata}
              placeholder='{"graph_id": "agent"}'
              aria-invalid={formError ? true : undefined}
              aria-describedby={formError ? errorId : undefined}
              onChange={(event) => setMetadata(event.target.value)}
            />
          </label>
          <button type="submit">Search</button>
          {formError ? (
            <p id={errorId} role="alert" className="cb-error">
              {formError}
            </p>
          ) : null}
        </form>
      </search>
      {pages.error ? (
        <p role="alert" className="cb-error">
          Could not list threads: {pages.error}
        </p>
      ) : null}
      <ThreadItems pages={pages} selectedId={selectedId} onSelect={onSelect} assistantNames={assistantNames} />
    </section>
  );
}

interface ThreadItemsProps {
  pages: ThreadPages;
  selectedId: string | null;
  onSelect: (threadId: string) => void;
  assistantNames: ReadonlyMap<string, string>;
}

function ThreadItems({ pages, selectedId, onSelect, assistantNames }: ThreadItemsProps) {
  const { threads, total, loading, done, loadMore } = pages;
  const scroller = useRef<HTMLDivElement>(null);
  const rows = useVirtualizer({
    count: threads.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_PX,
    overscan: 6,
    getItemKey: (index) => threads[index]?.thread_id ?? index,
  });
  const drawn = rows.getVirtualItems();
  const lastDrawn = drawn.at(-1)?.index ?? -1;
  useEffect(() => {
    if (!done && lastDrawn >= threads.length - PREFETCH_ROWS) loadMore();
  }, [done, lastDrawn, threads.length, loadMore]);

  if (threads.length === 0) {
    return <p aria-live="polite">{loading ? "Loading threads…" : pages.error ? "" : "No threads match."}</p>;
  }
  return (
    <>
      <div ref={scroller} className="cb-thread-scroller" data-testid="thread-scroller">
        <ul className="cb-thread-list" aria-label="Threads" aria-busy={loading} style={{ height: `${rows.getTotalSize()}px` }}>
          {drawn.map((row) => {
            const thread = threads[row.index]!;
            return (
              <li
                key={row.key}
                data-index={row.index}
                ref={rows.measureElement}
                aria-setsize={total ?? (done ? threads.length : -1)}
                aria-posinset={row.index + 1}
                className="cb-thread-row"
                style={{ transform: `translateY(${row.start}px)` }}
              >
                <ThreadRow
                  thread={thread}
                  selected={thread.thread_id === selectedId}
                  onSelect={onSelect}
                  assistant={threadAssistant(thread, assistantNames)}
                />
              </li>
            );
          })}
        </ul>
      </div>
      <p className="cb-muted cb-thread-count" aria-live="polite">
        {done
          ? `${threads.length} ${threads.length === 1 ? "thread" : "threads"}`
          : `${threads.length} of ${total ?? "more"} threads loaded`}
      </p>
      {done ? null : (
        <button type="button" onClick={loadMore} disabled={loading}>
          Load more threads
        </button>
      )}
    </>
  );
}

interface ThreadRowProps {
  thread: Thread;
  selected: boolean;
  onSelect: (threadId: string) => void;
  assistant: string | undefined;
}

/** A thread as a row: its title, its last message, its status, who answers in it and when it last changed. */
function ThreadRow({ thread, selected, onSelect, assistant }: ThreadRowProps) {
  const title = threadTitle(thread);
  const preview = threadPreview(thread);
  return (
    <button
      type="button"
      className="cb-thread"
      aria-current={selected ? "true" : undefined}
      title={thread.thread_id}
      onClick={() => onSelect(thread.thread_id)}
    >
      <span className="cb-thread-top">
        <span className={title ? "cb-thread-title" : "cb-thread-title cb-muted"}>{title || "Untitled thread"}</span>
        <StatusBadge status={thread.status} label="Status" />
      </span>
      <span className="cb-thread-preview">{preview || "No messages yet"}</span>
      <span className="cb-thread-meta">
        <span className="cb-mono">{shortId(thread.thread_id)}</span>
        {assistant ? <span className="cb-thread-assistant">{assistant}</span> : null}
        <Time iso={thread.updated_at} />
      </span>
    </button>
  );
}
