import { type ReactNode, useDeferredValue, useEffect, useMemo, useRef, useState } from "react";
import type { LogLine } from "../api/types";
import { useLogStream } from "../hooks/useLogStream";
import { ErrorNote } from "../ui/ErrorNote";

interface LogViewerProps {
  deploymentId: string;
  revisionId: string;
  kind: "build" | "deploy";
  /** Names the downloaded file: `<name>-<revision>-build-log.txt`. */
  name?: string;
}

const lineText = (line: LogLine) => `${line.timestamp.slice(11, 19)} ${line.level.padEnd(5)} ${line.message}`;

/** The line with every case-insensitive occurrence of `query` marked. */
function highlighted(text: string, query: string): ReactNode {
  const lower = text.toLowerCase();
  const parts: ReactNode[] = [];
  let from = 0;
  for (let at = lower.indexOf(query, from); at !== -1; at = lower.indexOf(query, from)) {
    parts.push(text.slice(from, at), <mark key={at}>{text.slice(at, at + query.length)}</mark>);
    from = at + query.length;
  }
  parts.push(text.slice(from));
  return parts;
}

/** Saves `text` as a file: a Blob URL on a link with `download` (a download is no request the page's policy governs). */
function download(text: string, fileName: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "text/plain;charset=utf-8" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has started reading it by then.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * A revision's build or server log, its lines shown as the control plane streams them. A search box keeps the
 * lines that contain its text (marked), the pane opens to its full height, and the whole log downloads as text.
 */
export function LogViewer({ deploymentId, revisionId, kind, name }: LogViewerProps) {
  const { lines, error } = useLogStream(deploymentId, revisionId, kind);
  const box = useRef<HTMLPreElement>(null);
  const [search, setSearch] = useState("");
  const [expanded, setExpanded] = useState(false);
  const query = useDeferredValue(search.trim().toLowerCase());
  const texts = useMemo(() => lines.map(lineText), [lines]);
  const shown = useMemo(() => (query ? texts.filter((text) => text.toLowerCase().includes(query)) : texts), [texts, query]);

  // Stay at the end while the reader is there; leave them where they scrolled otherwise.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when lines arrive
  useEffect(() => {
    const element = box.current;
    if (element && element.scrollHeight - element.scrollTop - element.clientHeight < 80) element.scrollTop = element.scrollHeight;
  }, [lines]);

  const title = kind === "build" ? "Build log" : "Server log";
  const id = `${kind}-log-title`;
  const fileName = `${name ? `${name}-` : ""}${revisionId.slice(0, 8)}-${kind === "build" ? "build" : "server"}-log.txt`;
  let body: ReactNode;
  if (lines.length === 0) body = "(no lines yet)";
  else if (shown.length === 0) body = `(no line contains "${search.trim()}")`;
  else if (!query) body = shown.join("\n");
  else
    body = shown.map((text, index) => (
      // biome-ignore lint/suspicious/noArrayIndexKey: the filtered lines are plain text, shown in order
      <span key={index}>
        {index > 0 && "\n"}
        {highlighted(text, query)}
      </span>
    ));

  return (
    <section aria-labelledby={id} className={expanded ? "log expanded" : "log"}>
      <div className="log-head">
        <h3 id={id}>{title}</h3>
        <input
          type="search"
          aria-label={`Search the ${title.toLowerCase()}`}
          placeholder="Search"
          value={search}
          onChange={(event) => setSearch(event.target.value)}
        />
        <span className="hint" aria-live="polite">
          {query ? `${shown.length} of ${lines.length} lines` : `${lines.length} ${lines.length === 1 ? "line" : "lines"}`}
        </span>
        <button type="button" aria-pressed={expanded} onClick={() => setExpanded(!expanded)}>
          {expanded ? "Collapse" : "Full height"}
        </button>
        <button
          type="button"
          aria-label={`Download the ${title.toLowerCase()}`}
          disabled={lines.length === 0}
          onClick={() => download(`${texts.join("\n")}\n`, fileName)}
        >
          Download
        </button>
      </div>
      <ErrorNote error={error} />
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard to scroll it */}
      <pre ref={box} role="log" aria-labelledby={id} tabIndex={0} data-log={kind}>
        {body}
      </pre>
    </section>
  );
}
