import { MemorySaver } from "@langchain/langgraph";
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";

/**
 * Keeps values as they are: the checkpoints of a run whose thread is deleted
 * when it ends are read by nothing but the run itself, so encoding each one
 * (a third of LangGraph's checkpoint work) buys nothing.
 */
const byReference: SerializerProtocol = {
  // The in-memory saver stores whatever this returns and gives it back to `loadsTyped`.
  dumpsTyped: async (value: unknown) => ["by-reference", value as Uint8Array],
  loadsTyped: async (_type: string, data: Uint8Array | string) => data,
};

/** The checkpointer of a stateless run whose thread is deleted when it ends: in memory, values kept by reference. */
export function ephemeralSaver(): MemorySaver {
  return new MemorySaver(byReference);
}
