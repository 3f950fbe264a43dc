export interface SseEvent {
  id?: string;
  event: string;
  data: unknown;
}

/** Parses an SSE body event by event (comments skipped), as it arrives. */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event: string | undefined;
      let id: string | undefined;
      let data: string | undefined;
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("id: ")) id = line.slice(4);
        else if (line.startsWith("data: ")) data = line.slice(6);
      }
      if (event !== undefined) yield { id, event, data: data === undefined ? null : JSON.parse(data) };
    }
  }
}

/** The state of the `slow` fixture graph. */
export type SlowState = { steps: number; delay_ms: number; done: number };
