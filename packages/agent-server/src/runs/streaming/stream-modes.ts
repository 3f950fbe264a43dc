/** The `stream_mode` values a client may request from the Agent Server. */
export type StreamMode =
  | "values"
  | "updates"
  | "messages"
  | "messages-tuple"
  | "debug"
  | "custom"
  | "events"
  | "tasks"
  | "checkpoints";

export const STREAM_MODES: readonly StreamMode[] = [
  "values",
  "updates",
  "messages",
  "messages-tuple",
  "debug",
  "custom",
  "events",
  "tasks",
  "checkpoints",
];

/**
 * The LangGraph stream modes to pass to `graph.stream` / `graph.streamEvents`
 * for what the client requested. The API's names differ from LangGraph's:
 * - `messages-tuple` is LangGraph's own `messages` mode, forwarded as is;
 * - the API's `messages` mode is built by the server from LangGraph `messages`
 *   (tokens) and `values` (to know when a message is complete);
 * - `events` is not a LangGraph mode at all: it comes from `streamEvents`.
 * `values` is always included because the server keeps the last values for
 * `/wait`, `/join` and the webhook, whatever the client streams.
 */
export function graphStreamModes(requested: StreamMode[]): string[] {
  const modes = new Set<string>(["values"]);
  for (const mode of requested) {
    switch (mode) {
      case "events":
        break;
      case "messages-tuple":
        modes.add("messages");
        break;
      case "messages":
        modes.add("messages");
        modes.add("values");
        break;
      default:
        modes.add(mode);
    }
  }
  return [...modes];
}
