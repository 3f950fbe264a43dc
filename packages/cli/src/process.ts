/** A TCP port from a command-line value (0 picks a free one), or undefined when it is not one. */
export function parsePort(text: string): number | undefined {
  const port = Number(text);
  return Number.isInteger(port) && port >= 0 && port <= 65535 ? port : undefined;
}

/**
 * A long-running command: SIGINT and SIGTERM close it gracefully, then the
 * process exits. With `deadlineMs`, a close not finished by then (a database
 * call that never returns, say) ends the process anyway, saying so.
 */
export function closeOnSignals(server: { close(): Promise<void> }, deadlineMs?: number): void {
  const stop = async () => {
    if (deadlineMs !== undefined) {
      setTimeout(() => {
        process.stderr.write(`berth: the graceful shutdown did not finish within ${deadlineMs / 1000} s; exiting\n`);
        process.exit(1);
      }, deadlineMs).unref();
    }
    await server.close();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

/** `parse()`'s result, or the error it threw (a bad flag: the command prints it with its usage). */
export function parsedOrError<T>(parse: () => T): T | Error {
  try {
    return parse();
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
