import type { Readable } from "node:stream";
import type { ContainerEngine, EngineLog } from "../../engine/docker-engine.js";

/** One line of an engine's push output. */
interface PushEvent {
  id?: string;
  status?: string;
  progressDetail?: { current?: number };
  error?: string;
  errorDetail?: { message?: string };
}

/**
 * Tags the engine's image `local` as `target` (`host[:port]/path:tag`) and
 * pushes it through the engine, with `auth` when given; the per-layer
 * outcomes go to `log` (not the progress bars). Rejects with the engine's reason.
 */
export async function pushImage(
  engine: ContainerEngine,
  local: string,
  target: string,
  options: { auth?: { username: string; password: string }; log: EngineLog; signal?: AbortSignal },
): Promise<void> {
  const colon = target.lastIndexOf(":");
  const repo = target.slice(0, colon);
  const tag = target.slice(colon + 1);
  await engine.docker.getImage(local).tag({ repo, tag });
  // Docker refuses a push without an X-Registry-Auth header, even to a registry that needs no login.
  const serveraddress = repo.split("/")[0]!;
  const stream = (await engine.docker.getImage(repo).push({
    tag,
    authconfig: { ...options.auth, serveraddress },
    abortSignal: options.signal,
  })) as Readable;
  await new Promise<void>((resolve, reject) => {
    let failure: string | undefined;
    engine.docker.modem.followProgress(
      stream,
      (error: Error | null) => (error ? reject(error) : failure ? reject(new Error(failure)) : resolve()),
      (event: PushEvent) => {
        if (event.error) {
          failure = event.errorDetail?.message ?? event.error;
          options.log({ level: "error", message: failure });
        } else if (event.status && event.progressDetail?.current === undefined) {
          options.log({ level: "info", message: event.id ? `${event.id}: ${event.status}` : event.status });
        }
      },
    );
  });
}
