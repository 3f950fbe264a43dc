import { BaseLangGraphError } from "@langchain/langgraph";
import { UnprocessableError } from "./errors.js";

/**
 * Runs a graph operation that applies a client's input (state updates,
 * supersteps): LangGraph's own errors about that input become a 422.
 */
export async function withGraphInput<T>(operation: () => Promise<T>, loc: (string | number)[]): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof BaseLangGraphError) throw new UnprocessableError(`${error.name}: ${error.message}`, loc);
    throw error;
  }
}
