import type Docker from "dockerode";
import { PassThrough } from "node:stream";
import { type OutputLine, OutputTail, onLines, parseStderrLine, parseStdoutLine } from "../process-output.js";
import type { Exit, LaunchedProcess } from "../launched-process.js";

/**
 * One agent server in a container the launcher created and started: its
 * output (demultiplexed from the engine's log stream), its published URL and
 * its exit. Once it exits the container is removed: a restart creates a new one.
 */
export class ContainerServer implements LaunchedProcess {
  readonly tail = new OutputTail();
  readonly exited: Promise<Exit>;
  readonly listening: Promise<string>;
  readonly pid = 0;
  private gone = false;
  /** Sidecars in its network: they end with it. */
  private companions: Docker.Container[] = [];
  private output: Promise<void> | undefined;

  constructor(
    private readonly docker: Docker,
    private readonly container: Docker.Container,
    url: Promise<string>,
    private readonly onLine: (line: OutputLine) => void,
  ) {
    this.listening = url;
    // Created, not started yet: "next-exit" waits for the exit to come (the default answers at once for a created container).
    this.exited = container
      .wait({ condition: "next-exit" })
      .then(async (result: { StatusCode: number }) => {
        const state = await container.inspect().then(
          (info) => info.State,
          () => undefined,
        );
        // Followed since the start; when it never was (the start failed), what it wrote is read now.
        await (this.output ??= this.follow());
        return { code: result.StatusCode, signal: null, outOfMemory: state?.OOMKilled === true } satisfies Exit;
      })
      .catch((error: Error) => ({ code: null, signal: null, error }) satisfies Exit)
      .then(async (exit) => {
        // Removed before the exit is reported: whoever waited for it may remove the image next.
        await Promise.all(this.companions.map((companion) => companion.remove({ force: true }).catch(() => {})));
        await container.remove({ force: true }).catch(() => {});
        this.gone = true;
        return exit;
      });
  }

  /** Sidecars started beside it, removed when it ends (at once, if it ended already). */
  adoptCompanions(companions: Docker.Container[]): void {
    this.companions = companions;
    // Ended already: podman's engine refused to remove it while they were in its network, so it goes after them.
    if (this.gone)
      void Promise.all(companions.map((companion) => companion.remove({ force: true }).catch(() => {}))).then(() =>
        this.container.remove({ force: true }).catch(() => {}),
      );
  }

  /**
   * Follows its output once the container started: an engine asked to follow a container that is only created
   * (Docker Engine 20.10) answers with an empty stream that ends at once.
   */
  followOutput(): void {
    this.output ??= this.follow();
  }

  hasExited(): boolean {
    return this.gone;
  }

  /** The engine sends SIGTERM to the server (behind its init) and SIGKILL after the grace period. */
  async terminate(graceMs: number): Promise<Exit> {
    if (!this.gone) {
      await this.container.stop({ t: Math.max(1, Math.ceil(graceMs / 1000)) }).catch((error: { statusCode?: number }) => {
        // 304: stopped already; 404: removed already.
        if (error.statusCode !== 304 && error.statusCode !== 404) throw error;
      });
    }
    return this.exited;
  }

  /** Reads stdout and stderr until the container ends; resolves when the stream does. */
  private async follow(): Promise<void> {
    const onLine = this.onLine;
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    onLines(stdout, (raw) => {
      const line = parseStdoutLine(raw);
      this.tail.push(line.message, false);
      onLine(line);
    });
    onLines(stderr, (raw) => {
      const line = parseStderrLine(raw);
      this.tail.push(line.message, true);
      onLine(line);
    });
    try {
      const stream = await this.container.logs({ follow: true, stdout: true, stderr: true });
      this.docker.modem.demuxStream(stream, stdout, stderr);
      await new Promise<void>((resolve) => {
        stream.on("end", resolve);
        stream.on("close", resolve);
        stream.on("error", () => resolve());
      });
    } catch {
      // The container is gone already: its exit says why.
    } finally {
      stdout.end();
      stderr.end();
    }
  }
}
