import { useEffect, useRef } from "react";
import { useLogStream } from "../hooks/useLogStream";
import { ErrorNote } from "../ui/ErrorNote";

interface LogViewerProps {
  deploymentId: string;
  revisionId: string;
  kind: "build" | "deploy";
}

/** A revision's build or server log, its lines shown as the control plane streams them. */
export function LogViewer({ deploymentId, revisionId, kind }: LogViewerProps) {
  const { lines, error } = useLogStream(deploymentId, revisionId, kind);
  const box = useRef<HTMLPreElement>(null);

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
