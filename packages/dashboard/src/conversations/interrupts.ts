import type { Interrupt, Thread, ThreadState } from "@langchain/langgraph-sdk";

/** The interrupts a thread waits on: the thread's own list, else those of its latest state's tasks. */
export function pendingInterrupts(thread: Thread | undefined, latest: ThreadState | undefined): Interrupt[] {
  if (thread?.status !== "interrupted") return [];
  const fromThread = Object.values(thread.interrupts ?? {}).flat();
  if (fromThread.length > 0) return fromThread;
  return (latest?.tasks ?? []).flatMap((task) => task.interrupts ?? []);
}
