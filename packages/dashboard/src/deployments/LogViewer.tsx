import { useEffect, useRef, useState } from "react";
import { useSession } from "../api/context";
import type { LogLine, LogPage } from "../api/types";
import { messageOf } from "../hooks/useAction";
import { ErrorNote } from "../ui/ErrorNote";

const POLL_MS = 1000;
const PAGE = 1000;

interface LogViewerProps {
  deploymentId: string;
  revisionId: string;
  kind: "build" | "deploy";
  /** The log is complete once a final revision's last page is read: stop asking then. */
  complete: boolean;
}

/**
 * A revision's build or server log, followed live: it reads the lines after
 * the ones it has (the log API's `offset`, oldest first) every second while
 * it is on the page, and at once while full pages keep coming.
 */
export function LogViewer({ deploymentId, revisionId, kind, complete }: LogViewerProps) {
  const { api } = useSession();
  const [lines, setLines] = useState<LogLine[]>([]);
  const [error, setError] = useState<string>();
  const completeRef = useRef(complete);
  completeRef.current = complete;
  const box = useRef<HTMLPreElement>(null);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let offset = 0;
    setLines([]);
    const read = async () => {
      let more = false;
      try {
        const page = await api.post<LogPage>(`v1/projects/${deploymentId}/revisions/${revisionId}/${kind}_logs`, {
          order: "asc",
          limit: PAGE,
          offset,
        });
        if (stopped) return;
        offset += page.logs.length;
        if (page.logs.length > 0) setLines((known) => [...known, ...page.logs]);
        setError(undefined);
        more = page.next_offset !== null;
        if (!more && completeRef.current) return;
      } catch (caught) {
        if (stopped) return;
        setError(messageOf(caught));
      }
      timer = setTimeout(read, more ? 0 : POLL_MS);
    };
    void read();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [api, deploymentId, revisionId, kind]);

  // Stay at the end while the reader is there; leave them where they scrolled otherwise.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when lines arrive
  useEffect(() => {
    const element = box.current;
    if (element && element.scrollHeight - element.scrollTop - element.clientHeight < 80) element.scrollTop = element.scrollHeight;
  }, [lines]);

  const title = kind === "build" ? "Build log" : "Server log";
  const id = `${kind}-log-title`;
  return (
    <section aria-labelledby={id} className="log">
      <h3 id={id}>{title}</h3>
      <ErrorNote error={error} />
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard to scroll it */}
      <pre ref={box} role="log" aria-labelledby={id} tabIndex={0} data-log={kind}>
        {lines.length === 0
          ? "(no lines yet)"
          : lines.map((line) => `${line.timestamp.slice(11, 19)} ${line.level.padEnd(5)} ${line.message}`).join("\n")}
      </pre>
    </section>
  );
}
