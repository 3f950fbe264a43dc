import type { BerthProcess } from "@berth/test-support";

/** Every item of a stream, once it ended. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

/** Reads a `slow` run's stream until its state shows `count` steps done. */
export async function progressOf(api: BerthProcess, threadId: string, runId: string, count: number): Promise<void> {
  for await (const part of api.client.runs.joinStream(threadId, runId, { lastEventId: "-1" })) {
    if (part.event === "values" && ((part.data as { done?: number }).done ?? 0) >= count) return;
  }
  throw new Error(`run ${runId} ended before ${count} steps`);
}
