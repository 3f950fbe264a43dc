import { type LiveRun, PHASE_TEXT } from "./live-run";
import { shortId } from "./format";

interface LiveStatusProps {
  run: LiveRun;
  onStopWatching: () => void;
}

/** Where the streamed run is, as text announced politely, and a way to stop reading it. */
export function LiveStatus({ run, onStopWatching }: LiveStatusProps) {
  const streaming = run.phase === "starting" || run.phase === "streaming";
  return (
    <div className="cb-live-status">
      <p role="status">
        {run.runId ? <>Run {shortId(run.runId)}: </> : "Run: "}
        <strong className={`cb-phase cb-phase-${run.phase}`}>{PHASE_TEXT[run.phase]}</strong>
        {run.tokens > 0 ? (
          <span className="cb-muted">
            {" "}
            · {run.tokens} {run.tokens === 1 ? "token" : "tokens"} streamed
          </span>
        ) : null}
      </p>
      {run.error ? (
        <p role="alert" className="cb-error">
          {run.error}
        </p>
      ) : null}
      {streaming ? (
        <button type="button" onClick={onStopWatching}>
          Stop watching
        </button>
      ) : null}
    </div>
  );
}
