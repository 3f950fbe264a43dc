import { checkGraphs, type GraphCheckOptions } from "../../../build/graph-check.js";
import type { ServerInstance } from "../../../compute/types.js";

/** Starts the revision's agent server on the build at `configFile`; resolves once it is healthy. */
export type StartServer = (configFile: string) => Promise<ServerInstance>;

/**
 * On local compute the build starts the revision's serving agent server: its
 * graph check is that server's start. The server loads the project exactly as `berth
 * check` does (every graph, the auth module, http.app, the store's embedder,
 * the ui components), so a server that starts passes the check, and goes on
 * to serve the revision instead of a second process loading it all again.
 * The build still passes only once that is known: its marker is written after
 * this check, as after `berth check`.
 *
 * A server that does not start proves nothing either way, so `berth check`
 * runs then, as it always did: a project that does not load fails the build
 * with the check's reason and log; one that loads keeps the start's error,
 * and the deploy fails with it (`startFailure`).
 */
export class BuildStartsServer {
  private started: ServerInstance | undefined;
  /** Why the server did not start although every graph loads: the deploy's reason to fail. */
  startFailure: unknown;

  constructor(private readonly start: StartServer) {}

  readonly check = async (options: GraphCheckOptions): Promise<void> => {
    const { log, signal } = options;
    log({ level: "info", message: "Starting the revision's agent server, which loads every graph (its log: the deploy log)" });
    try {
      // The caller stops it if it never serves (see take()).
      const instance = await this.start(options.configFile);
      this.started = instance;
      const graphs = instance.graphs ?? [];
      log({ level: "info", message: `${graphs.length} graph${graphs.length === 1 ? "" : "s"} loaded: ${graphs.join(", ")}` });
      return;
    } catch (error) {
      if (signal?.aborted) throw error;
      log({ level: "info", message: "The agent server did not start; checking the graphs in a process of their own" });
      await checkGraphs(options);
      this.startFailure = error;
    }
  };

  get hasServer(): boolean {
    return this.started !== undefined;
  }

  /** The server the check started, now the caller's to serve with or stop; undefined after the first call. */
  take(): ServerInstance | undefined {
    const instance = this.started;
    this.started = undefined;
    return instance;
  }
}
