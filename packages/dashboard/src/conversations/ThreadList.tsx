import type { Client, Thread, ThreadStatus } from "@langchain/langgraph-sdk";
import { type FormEvent, useId, useState } from "react";
import { parseMetadataFilter, shortId, showTime } from "./format";
import { StatusBadge } from "./StatusBadge";
import { useAsync } from "./use-async";

const STATUSES: ThreadStatus[] = ["idle", "busy", "interrupted", "error"];

interface Filter {
  status?: ThreadStatus;
  metadata?: Record<string, unknown>;
}

interface ThreadListProps {
  client: Client;
  selectedId: string | null;
  onSelect: (threadId: string) => void;
  /** Changes when a run starts or ends: the list reloads to show new threads and statuses. */
  refreshKey: number;
}

/** The deployment's threads, most recently updated first, filtered by status and metadata. */
export function ThreadList({ client, selectedId, onSelect, refreshKey }: ThreadListProps) {
  const [filter, setFilter] = useState<Filter>({});
  const [status, setStatus] = useState("");
  const [metadata, setMetadata] = useState("");
  const [formError, setFormError] = useState<string | null>(null);
  const headingId = useId();
  const errorId = useId();
  const threads = useAsync(
    (signal) => client.threads.search({ ...filter, limit: 50, sortBy: "updated_at", sortOrder: "desc", signal }),
    [client, filter, refreshKey],
  );

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
      {threads.error ? (
        <p role="alert" className="cb-error">
          Could not list threads: {threads.error}
        </p>
      ) : null}
      <ThreadItems threads={threads.data} loading={threads.loading} selectedId={selectedId} onSelect={onSelect} />
    </section>
  );
}

function ThreadItems({
  threads,
  loading,
  selectedId,
  onSelect,
}: {
  threads: Thread[] | undefined;
  loading: boolean;
  selectedId: string | null;
  onSelect: (threadId: string) => void;
}) {
  if (!threads) return <p aria-live="polite">{loading ? "Loading threads…" : ""}</p>;
  if (threads.length === 0) return <p aria-live="polite">No threads match.</p>;
  return (
    <ul className="cb-thread-list" aria-label="Threads" aria-busy={loading}>
      {threads.map((thread) => (
        <li key={thread.thread_id}>
          <button
            type="button"
            className="cb-thread"
            aria-current={thread.thread_id === selectedId ? "true" : undefined}
            title={thread.thread_id}
            onClick={() => onSelect(thread.thread_id)}
          >
            <span className="cb-thread-id">Thread {shortId(thread.thread_id)}</span>
            <StatusBadge status={thread.status} label="Status" />
            <span className="cb-muted">{showTime(thread.updated_at)}</span>
          </button>
        </li>
      ))}
    </ul>
  );
}
