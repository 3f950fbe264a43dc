import { showValue } from "./format";
import { MarkdownText } from "./Markdown";
import type { ShownToolCall } from "./messages";

/** A tool's answer: JSON indented when it parses as an object or a list, else the text as Markdown. */
function ToolResult({ text }: { text: string }) {
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return <pre className="cb-json">{showValue(JSON.parse(trimmed))}</pre>;
    } catch {
      // not JSON after all: shown as text
    }
  }
  return <MarkdownText className="cb-text" text={text} />;
}

/** One call an AI message makes: the tool's name, its arguments, and under them the tool's answer. */
export function ToolCall({ call, running }: { call: ShownToolCall; running: boolean }) {
  const result = call.result;
  const failed = result?.status === "error";
  return (
    <section className="cb-tool-call" aria-label={`Tool call ${call.name}`}>
      <div className="cb-tool-head">
        <span className="cb-tool-label">Tool call</span> <code className="cb-tool-name">{call.name || "(unnamed)"}</code>
        <span className="cb-muted cb-mono cb-tool-id" title="The call's id">
          {call.id}
        </span>
      </div>
      <pre className="cb-json cb-tool-args">{showValue(call.args)}</pre>
      <div className={`cb-tool-result${failed ? " cb-tool-failed" : ""}`}>
        <span className="cb-tool-label">{failed ? "Error" : "Result"}</span>
        {result ? (
          <>
            <ToolResult text={result.text} />
            {result.otherParts.map((part, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: parts have no id and keep their order
              <pre key={index} className="cb-json">
                {showValue(part)}
              </pre>
            ))}
          </>
        ) : (
          <p className="cb-muted">{running ? "Waiting for the tool…" : "No result in this thread."}</p>
        )}
      </div>
    </section>
  );
}
