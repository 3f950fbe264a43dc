import { ConflictError, UnprocessableError } from "@berth/service-kit";

/** Errors of the machinery (database, file system), as opposed to errors about the client's input. */
function isInfrastructureError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const name = (error as { name?: unknown } | null)?.name;
  return name === "SqliteError" || name === "DatabaseError" || (typeof code === "string" && /^(SQLITE|E[A-Z]+$)/.test(code));
}

/**
 * Runs a graph operation that applies a client's input (state updates,
 * supersteps): what LangGraph or the graph's own schema rejects about that
 * input becomes a 422; database and system failures stay server errors.
 */
export async function withGraphInput<T>(operation: () => Promise<T>, loc: (string | number)[]): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof Error && !isInfrastructureError(error)) {
      throw new UnprocessableError(`${error.name}: ${error.message}`, loc);
    }
    throw error;
  }
}

/**
 * Runs a read of a thread's graph state: a checkpoint the graph cannot
 * restore (a write its reducer rejects, left by a failed run) is a 409 that
 * says why, not a server error; database and system failures stay server errors.
 */
export async function readingGraphState<T>(threadId: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof Error && !isInfrastructureError(error)) {
      throw new ConflictError(`Thread ${threadId}'s state cannot be restored by its graph: ${error.name}: ${error.message}`);
    }
    throw error;
  }
}
