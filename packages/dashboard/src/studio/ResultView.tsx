import { messageText } from "./messages";

/** The thread's state now: its messages as a conversation, the other keys as JSON. */
export function ResultView({ values }: { values: unknown }) {
  if (typeof values !== "object" || values === null || Array.isArray(values)) return null;
  const { messages, ...rest } = values as Record<string, unknown>;
  return (
    <section className="studio-result" aria-label="State">
      <h3>State</h3>
      {Array.isArray(messages) && (
        <ol className="studio-messages" aria-label="Messages">
          {messages.map((message: unknown, index) => {
            const { type, text } = messageText(message);
            return (
              // biome-ignore lint/suspicious/noArrayIndexKey: a transcript's order is its identity
              <li key={index} className={`studio-message studio-message-${type}`}>
                <span className="studio-message-type">{type}</span> {text}
              </li>
            );
          })}
        </ol>
      )}
      {Object.keys(rest).length > 0 && <pre className="studio-values">{JSON.stringify(rest, null, 2)}</pre>}
    </section>
  );
}
