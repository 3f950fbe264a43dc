import { useEffect, useState } from "react";
import { ApiError } from "../api/client";
import { useSession } from "../api/context";
import { eventBatches } from "../api/event-stream";
import type { LogLine } from "../api/types";
import { messageOf } from "./useAction";

/** After a lost connection the stream is opened again after this, doubling up to RETRY_MAX_MS. */
const RETRY_MS = 1000;
const RETRY_MAX_MS = 15_000;

export interface LogStream {
  lines: LogLine[];
  /** Why the stream is not flowing now (it reconnects by itself unless the control plane refused it). */
  error?: string;
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * A revision's build or server log, followed live through the log API's
 * stream (`…/<kind>_logs/stream`): the lines so far, then each line as it is
 * written. After a network error it reconnects with the id of the last line
 * it has, so no line is shown twice or missed. A build log ends when its
 * revision is final; a server log is followed while the page shows it.
 */
export function useLogStream(deploymentId: string, revisionId: string, kind: "build" | "deploy"): LogStream {
  const { api } = useSession();
  const [state, setState] = useState<LogStream>({ lines: [] });

  useEffect(() => {
    const stopped = new AbortController();
    const path = `v1/projects/${deploymentId}/revisions/${revisionId}/${kind}_logs/stream`;
    let lastId: string | undefined;
    setState({ lines: [] });

    const follow = async () => {
      for (let retryMs = RETRY_MS; !stopped.signal.aborted; retryMs = Math.min(retryMs * 2, RETRY_MAX_MS)) {
        try {
          const body = await api.stream(path, stopped.signal, lastId);
          retryMs = RETRY_MS;
          setState((known) => ({ ...known, error: undefined }));
          for await (const batch of eventBatches(body)) {
            const lines = batch.filter((event) => event.event === "message");
            if (lines.length > 0) {
              lastId = lines.at(-1)?.id;
              setState((known) => ({ lines: [...known.lines, ...lines.map((event) => JSON.parse(event.data) as LogLine)] }));
            }
            if (batch.some((event) => event.event === "end")) return;
          }
          // A stream that ends without `end` was cut (the control plane restarted): open it again.
        } catch (caught) {
          if (stopped.signal.aborted) return;
          // The control plane refused it (an unknown revision, a bad key): asking again would not help.
          const refused = caught instanceof ApiError && caught.status >= 400 && caught.status < 500 && caught.status !== 429;
          setState((known) => ({ ...known, error: refused ? messageOf(caught) : `${messageOf(caught)} (reconnecting)` }));
          if (refused) return;
        }
        await wait(retryMs, stopped.signal);
      }
    };
    void follow();
    return () => stopped.abort();
  }, [api, deploymentId, revisionId, kind]);

  return state;
}
