/**
 * A build failed for a reason that concerns the uploaded project (a refused
 * archive, a failing command, a graph that does not load). Its message becomes
 * the revision's `status_message`, so it says briefly what failed and why.
 */
export class BuildError extends Error {
  override readonly name = "BuildError";
}

/** One line of build output, shipped to the revision's build log. */
export interface BuildLogEntry {
  level: "info" | "error";
  message: string;
}

export type BuildLog = (entry: BuildLogEntry) => void;
