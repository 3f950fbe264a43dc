import type { ClientRequest, IncomingMessage } from "node:http";

/** Bytes of a request body kept for a retry; a larger body that already left cannot be retried. */
const REPLAY_LIMIT = 1024 * 1024;

/**
 * Streams the client's request body to the current upstream attempt, with
 * backpressure and no size limit, and keeps its first bytes so that an attempt
 * that failed before any response can be replayed on another target.
 */
export class RequestBody {
  private kept: Buffer[] = [];
  private keptBytes = 0;
  private replayable = true;
  private ended = false;
  private reading = false;
  private sink: ClientRequest | undefined;

  constructor(private readonly source: IncomingMessage) {}

  /** Whether every byte already sent upstream is still at hand. */
  canReplay(): boolean {
    return this.replayable;
  }

  /** A response started: there will be no retry, the kept bytes can go. */
  forgetReplay(): void {
    this.replayable = false;
    this.kept = [];
  }

  /** Sends the body (what was read so far, then the rest as it comes) to `sink`, which replaces the previous attempt. */
  sendTo(sink: ClientRequest): void {
    this.sink = sink;
    for (const chunk of this.kept) sink.write(chunk);
    if (this.ended) {
      sink.end();
      return;
    }
    sink.on("drain", () => {
      if (this.sink === sink) this.source.resume();
    });
    if (!this.reading) {
      this.reading = true;
      this.source.on("data", (chunk: Buffer) => this.onData(chunk));
      this.source.on("end", () => {
        this.ended = true;
        this.sink?.end();
      });
    }
    this.source.resume();
  }

  /** The attempt failed for good: what still arrives is read and dropped. */
  detach(): void {
    this.sink = undefined;
    this.forgetReplay();
    this.source.resume();
  }

  private onData(chunk: Buffer): void {
    if (this.replayable) {
      this.kept.push(chunk);
      this.keptBytes += chunk.length;
      if (this.keptBytes > REPLAY_LIMIT) this.forgetReplay();
    }
    if (this.sink && !this.sink.write(chunk)) this.source.pause();
  }
}
