/** Event ids of a run's attempt k start at (k-1)·10⁹ (see docs/agent-server.md, Streaming). */
const ATTEMPT_SPAN = 1_000_000_000;

/**
 * What is wrong with the ids a client received for one run's stream, in the
 * order received: each id once, consecutive within an attempt. A later
 * attempt may start after any id of an earlier one (events of a crashed
 * attempt that never reached the log are gone). Empty when nothing is.
 */
export function streamIdProblems(ids: number[]): string[] {
  const problems: string[] = [];
  const seen = new Set<number>();
  for (const [index, id] of ids.entries()) {
    if (seen.has(id)) problems.push(`id ${id} came twice`);
    seen.add(id);
    if (index === 0) continue;
    const previous = ids[index - 1];
    const nextAttempt = id % ATTEMPT_SPAN === 0 && Math.floor(id / ATTEMPT_SPAN) > Math.floor(previous / ATTEMPT_SPAN);
    if (id !== previous + 1 && !nextAttempt) problems.push(`id ${id} followed ${previous}`);
  }
  return problems;
}
