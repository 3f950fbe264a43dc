/** One Server-Sent Event: `event` is "message" when the server named none. */
export interface StreamEvent {
  event: string;
  id?: string;
  data: string;
}

/**
 * The events of a `text/event-stream` body as they arrive, a batch per chunk
 * read (comments, `retry:` and unknown fields skipped). EventSource would do
 * this, but it cannot send the X-Api-Key header.
 */
export async function* eventBatches(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent[]> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  let event: Partial<StreamEvent> = {};
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      pending += decoder.decode(value, { stream: true });
      const lines = pending.split(/\r?\n/);
      // The last piece is an unfinished line (or "" after a line break): it waits for the next chunk.
      pending = lines.pop() ?? "";
      const batch: StreamEvent[] = [];
      for (const line of lines) {
        if (line === "") {
          if (event.data !== undefined) batch.push({ event: event.event || "message", id: event.id, data: event.data });
          event = {};
          continue;
        }
        const colon = line.indexOf(":");
        if (colon === 0) continue;
        const field = colon === -1 ? line : line.slice(0, colon);
        const text = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") event.data = event.data === undefined ? text : `${event.data}\n${text}`;
        else if (field === "event") event.event = text;
        else if (field === "id") event.id = text;
      }
      if (batch.length > 0) yield batch;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}
