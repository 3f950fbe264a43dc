import { randomUUID } from "node:crypto";
import { sseEvents } from "./sse.js";

/** A run whose create request was answered 2xx: the server owes it a final status. */
export interface AcknowledgedRun {
  threadId: string;
  runId: string;
  streamed: boolean;
}

/** A run's stream as one client saw it, across the reconnections it needed. */
export interface FollowedStream {
  threadId: string;
  runId: string;
  /** Event ids in the order received. */
  ids: number[];
  /** A response ended normally (the server says the run's stream is over). */
  completed: boolean;
  reconnections: number;
  /** When the create request was sent (ms since the epoch). */
  startedAt: number;
}

/** An answer of 500 or more, with its reason. */
export interface ServerFailure {
  status: number;
  detail: unknown;
  retryAfter: string | null;
  request: string;
}

export interface LoadOptions {
  clients: number;
  /** Each client creates at most this many runs. */
  runsPerClient: number;
  /** Clients give up on anything still going (a stream, a join) this long after they were stopped. */
  drainMs: number;
}

/** Waiting before a client retries what failed: a client's policy, as any client's. */
const RETRY_MS = 250;

/** The runs the clients create: `slow` (a few checkpointed steps) and `chat` (a burst of token events). */
const RUNS = [
  { assistant_id: "slow", input: { steps: 5, delay_ms: 100 }, stream_mode: ["values", "custom"] },
  { assistant_id: "chat", input: { messages: [{ type: "human", content: "hi" }] }, stream_mode: ["messages-tuple", "values"] },
];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A steady load of runs from a few concurrent clients, each creating a thread
 * and a run on it, then following the run to its end: a background run by
 * joining it, a streamed one by reading its stream (resuming with
 * Last-Event-ID when the connection breaks). Clients retry what failed and go
 * on; everything the server answered is recorded.
 */
export class RunLoad {
  /** Run creations sent. */
  started = 0;
  readonly acknowledged: AcknowledgedRun[] = [];
  readonly threads = new Set<string>();
  readonly streams: FollowedStream[] = [];
  /** Responses by status ("network" for a request that got no answer). */
  readonly responses = new Map<string, number>();
  readonly failures: ServerFailure[] = [];
  /** Runs a client saw end (their stream or join finished). */
  ended = 0;
  private stopping = false;
  /** Aborted once the clients were stopped `drainMs` ago: what still waits (a stream, a join) gives up. */
  private readonly giveUp = new AbortController();
  private readonly clients: Promise<void>[] = [];
  private waiters: { at: number; resolve: () => void }[] = [];

  constructor(
    private readonly baseUrl: () => string,
    private readonly options: LoadOptions,
  ) {}

  start(): void {
    for (let index = 0; index < this.options.clients; index++) this.clients.push(this.client(index));
  }

  /** Stops creating runs; resolves once every client finished following its last run (or gave up). */
  async stop(): Promise<void> {
    this.stopping = true;
    const timer = setTimeout(() => this.giveUp.abort(), this.options.drainMs);
    await Promise.all(this.clients);
    clearTimeout(timer);
    for (const waiter of this.waiters) waiter.resolve();
  }

  /** Stops at once, following nothing further (a test that failed midway). */
  abort(): void {
    this.stopping = true;
    this.giveUp.abort();
  }

  /** Resolves once clients saw `count` more runs end: the server makes progress. */
  progressed(count: number): Promise<void> {
    const at = this.ended + count;
    return new Promise((resolve) => this.waiters.push({ at, resolve }));
  }

  private async client(index: number): Promise<void> {
    for (let n = 0; n < this.options.runsPerClient && !this.stopping; n++) {
      const threadId = await this.createThread();
      if (!threadId) continue;
      const streamed = (index + n) % 2 === 0;
      const run = RUNS[(index + n) % 3 === 0 ? 1 : 0];
      if (streamed) await this.streamRun(threadId, run);
      else await this.backgroundRun(threadId, run);
    }
  }

  /** A thread with an id of the client's choosing: creating it again is harmless, so it is retried. */
  private async createThread(): Promise<string | undefined> {
    const threadId = randomUUID();
    this.threads.add(threadId);
    while (!this.stopping) {
      const response = await this.send("POST", "/threads", { thread_id: threadId, if_exists: "do_nothing" });
      if (response?.ok) return threadId;
      await pause(RETRY_MS);
    }
    return undefined;
  }

  private async backgroundRun(threadId: string, run: (typeof RUNS)[number]): Promise<void> {
    this.started++;
    const created = await this.send("POST", `/threads/${threadId}/runs`, run);
    if (!created?.ok) return;
    const { run_id: runId } = (await created.json()) as { run_id: string };
    this.acknowledged.push({ threadId, runId, streamed: false });
    while (!this.givingUp()) {
      const joined = await this.send("GET", `/threads/${threadId}/runs/${runId}/join`);
      if (
        joined?.ok &&
        (await joined.text().then(
          () => true,
          () => false,
        ))
      )
        return this.sawEnd();
      await pause(RETRY_MS);
    }
  }

  private async streamRun(threadId: string, run: (typeof RUNS)[number]): Promise<void> {
    this.started++;
    const startedAt = Date.now();
    const response = await this.send("POST", `/threads/${threadId}/runs/stream`, run);
    if (!response?.ok) return;
    const runId = response.headers.get("content-location")!.split("/").at(-1)!;
    this.acknowledged.push({ threadId, runId, streamed: true });
    const stream: FollowedStream = { threadId, runId, ids: [], completed: false, reconnections: 0, startedAt };
    this.streams.push(stream);
    let body = response.body!;
    while (true) {
      if (await this.read(body, stream)) return this.sawEnd();
      // The connection broke: resume after the last event received, as the SDK does.
      let resumed: Response | undefined;
      while (!resumed && !this.givingUp()) {
        stream.reconnections++;
        const lastEventId = String(stream.ids.at(-1) ?? -1);
        resumed = await this.send("GET", `/threads/${threadId}/runs/${runId}/stream`, undefined, {
          "last-event-id": lastEventId,
        });
        if (!resumed?.ok) {
          resumed = undefined;
          await pause(RETRY_MS);
        }
      }
      if (!resumed) return;
      body = resumed.body!;
    }
  }

  /** Reads one response of a stream; true when it ended normally. */
  private async read(body: ReadableStream<Uint8Array>, stream: FollowedStream): Promise<boolean> {
    try {
      for await (const event of sseEvents(body)) stream.ids.push(Number(event.id));
      stream.completed = true;
      return true;
    } catch {
      return false;
    }
  }

  private sawEnd(): void {
    this.ended++;
    for (const waiter of this.waiters.filter((w) => w.at <= this.ended)) waiter.resolve();
    this.waiters = this.waiters.filter((w) => w.at > this.ended);
  }

  private givingUp(): boolean {
    return this.giveUp.signal.aborted;
  }

  /** One request; undefined when no answer came. Answers of 500 or more are recorded with their reason. */
  private async send(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Response | undefined> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl()}${path}`, {
        method,
        signal: this.giveUp.signal,
        headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      this.count("network");
      return undefined;
    }
    this.count(String(response.status));
    if (response.status >= 500) {
      const detail = await response.json().then(
        (json: { detail?: unknown }) => json.detail,
        () => undefined,
      );
      this.failures.push({
        status: response.status,
        detail,
        retryAfter: response.headers.get("retry-after"),
        request: `${method} ${path}`,
      });
    }
    return response;
  }

  private count(key: string): void {
    this.responses.set(key, (this.responses.get(key) ?? 0) + 1);
  }
}
