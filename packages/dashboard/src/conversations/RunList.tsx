import type { Run } from "@langchain/langgraph-sdk";
import { hrefOf } from "../router";
import { Time } from "../ui/Time";
import { shortId } from "./format";
import { StatusBadge } from "./StatusBadge";

interface RunListProps {
  runs: Run[];
  /** The run whose stream the live view shows, if any. */
  watchedRunId: string | null;
  onWatch: (runId: string) => void;
  /** Assistants' names by id. */
  assistantNames: ReadonlyMap<string, string>;
  /** For the links to each run's trace; without it there are none. */
  deploymentId: string | undefined;
}

/** The thread's runs, newest first, each linked to its trace; a run still going can be watched live. */
export function RunList({ runs, watchedRunId, onWatch, assistantNames, deploymentId }: RunListProps) {
  if (runs.length === 0) return <p>No runs yet.</p>;
  const newestFirst = runs.slice().sort((a, b) => b.created_at.localeCompare(a.created_at));
  return (
    <table className="cb-runs">
      <caption className="visually-hidden">Runs of this thread, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Run</th>
          <th scope="col">Status</th>
          <th scope="col">Assistant</th>
          <th scope="col">Created</th>
          <th scope="col">Trace</th>
          <th scope="col">Live</th>
        </tr>
      </thead>
      <tbody>
        {newestFirst.map((run) => (
          <tr key={run.run_id}>
            <td title={run.run_id} className="cb-mono">
              {shortId(run.run_id)}
            </td>
            <td>
              <StatusBadge status={run.status} />
            </td>
            <td title={run.assistant_id}>{assistantNames.get(run.assistant_id) ?? shortId(run.assistant_id)}</td>
            <td>
              <Time iso={run.created_at} />
            </td>
            <td>
              {deploymentId ? (
                <a href={hrefOf.trace(deploymentId, run.run_id)} aria-label={`Trace of run ${shortId(run.run_id)}`}>
                  Trace
                </a>
              ) : null}
            </td>
            <td>
              {(run.status === "pending" || run.status === "running") && run.run_id !== watchedRunId ? (
                <button type="button" onClick={() => onWatch(run.run_id)}>
                  Watch run {shortId(run.run_id)}
                </button>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
