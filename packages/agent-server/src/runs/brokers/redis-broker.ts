import { randomUUID } from "node:crypto";
import { type ChainableCommander, Redis } from "ioredis";
import { ServiceUnavailableError } from "@berth/service-kit";
import { createLogger, type Logger } from "../../logger.js";
import type { CancelAction, StoredEvent } from "../../storage/types.js";
import type { RunBroker, RunEndNotice, RunObserver, RunSubscription, SubscribeOptions } from "./broker.js";
import { InProcessBroker } from "./in-process-broker.js";
import { MessageReader, REDIS_MESSAGES, type RedisMessage } from "./messages.js";

/** How long a run's live buffer stays in Redis after the run ended (late followers read the log anyway). */
const BUFFER_TTL_SECONDS = 300;

/** At most one log line per connection and kind of failure this often, while Redis is down. */
const LOG_EVERY_MS = 30_000;

type Message = RedisMessage;
type RunMessage = Extract<Message, { t: "event" | "logged" | "end" }>;

/**
 * The broker across processes. Each run's current attempt is buffered in a
 * Redis stream (so a follower in another process catches up with what was
 * produced before it subscribed, flushed to the log or not) and announced on
 * the run's pub/sub channel; wake-ups and cancellations are broadcast.
 * Messages this process sent itself are delivered locally, not via Redis.
 *
 * Outages: what this process sends waits while Redis is unreachable and goes
 * out once it is back (the `publisher` connection never gives a command up),
 * so no event, end or cancellation is dropped here. What other processes sent
 * while this one's subscriber was disconnected is lost to pub/sub: once
 * subscribed again, followers replay the runs' buffers and are told to check
 * the log and the runs' status (RunObserver.onLost). Reads on a request's
 * path fail fast instead, as a 503.
 */
export class RedisBroker implements RunBroker {
  private readonly local = new InProcessBroker();
  private readonly origin = randomUUID();
  /** How every message this process sends begins (`o`, its origin, is each message's first key). */
  private readonly ownMessages = `{"o":"${this.origin}"`;
  private readonly reader: MessageReader;
  /** One SUBSCRIBE per run channel, awaited by every observer before it replays the buffer. */
  private readonly subscribed = new Map<string, Promise<unknown>>();
  /**
   * Every channel this process listens to, subscribed again by `resubscribed`
   * after a reconnection (ioredis' own re-subscription is off: when it fails,
   * its rejection is nobody's and ends the process).
   */
  private readonly channels = new Set<string>();
  private closed = false;
  /** What this turn of the event loop sends (events, ends, wake-ups...): one write to Redis per turn, in order. */
  private outgoing: ChainableCommander | undefined;

  private constructor(
    /** Sends; queues while disconnected, never drops (maxRetriesPerRequest: null). */
    private readonly publisher: Redis,
    /** Reads on a request's path; fails after a few reconnection attempts. */
    private readonly commands: Redis,
    private readonly subscriber: Redis,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {
    this.reader = new MessageReader(logger);
    subscriber.on("message", (channel: string, text: string) => this.receive(channel, text));
    this.watchConnection(publisher, "publisher");
    this.watchConnection(commands, "commands");
    this.watchConnection(subscriber, "subscriber", () => void this.resubscribed());
  }

  static async connect(url: string, prefix = "berth", logger: Logger = createLogger()): Promise<RedisBroker> {
    const commands = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
    const publisher = commands.duplicate({ maxRetriesPerRequest: null });
    const subscriber = commands.duplicate({ autoResubscribe: false });
    const connections = [commands, publisher, subscriber];
    // Unreachable at start: the process fails with the reason (its supervisor restarts it), not with ioredis' noise.
    let cause: unknown;
    const noted = (err: unknown) => void (cause ??= err);
    for (const connection of connections) connection.on("error", noted);
    try {
      await Promise.all(connections.map((connection) => connection.connect()));
      const broker = new RedisBroker(publisher, commands, subscriber, prefix, logger);
      await Promise.all([broker.listen(broker.wakeChannel), broker.listen(broker.cancelChannel)]);
      return broker;
    } catch (error) {
      for (const connection of connections) connection.disconnect();
      const reason = cause ?? error;
      throw new Error(`Redis (REDIS_URL) unreachable: ${reason instanceof Error ? reason.message : String(reason)}`, {
        cause: reason,
      });
    } finally {
      for (const connection of connections) connection.off("error", noted);
    }
  }

  private get wakeChannel() {
    return `${this.prefix}:wake`;
  }
  private get cancelChannel() {
    return `${this.prefix}:cancel`;
  }
  private runChannel(runId: string) {
    return `${this.prefix}:run:${runId}`;
  }
  private threadChannel(threadId: string) {
    return `${this.prefix}:thread:${threadId}`;
  }
  private bufferKey(runId: string) {
    return `${this.prefix}:events:${runId}`;
  }

  begin(runId: string, threadId: string): void {
    this.local.begin(runId, threadId);
    const message = JSON.stringify({ o: this.origin, t: "start", r: runId } satisfies Message);
    // In this turn's pipeline, after what was queued before (an earlier attempt's end, say), before the attempt's events.
    this.outbox().del(this.bufferKey(runId)).publish(this.threadChannel(threadId), message);
  }

  publish(runId: string, event: StoredEvent): void {
    this.local.publish(runId, event);
    this.broadcastToRun(runId, { o: this.origin, t: "event", e: event }, false);
  }

  /** Followers waiting for the log to fill a gap read it again (not buffered: they need no replay of it). */
  logged(runId: string): void {
    this.local.deliverLogged(runId);
    const text = JSON.stringify({ o: this.origin, t: "logged" } satisfies Message);
    this.outbox().publish(this.runChannel(runId), text);
  }

  end(runId: string, notice: RunEndNotice): void {
    this.local.end(runId, notice);
    this.broadcastToRun(runId, { o: this.origin, t: "end", n: notice }, true);
  }

  async subscribe(runId: string, observer: RunObserver, options?: SubscribeOptions): Promise<RunSubscription> {
    const guarded = new GuardedObserver(observer);
    const subscription = this.local.subscribeSync(runId, guarded);
    let subscribed = true;
    const unsubscribe = () => {
      if (!subscribed) return;
      subscribed = false;
      subscription.unsubscribe();
      if (this.local.hasObservers(runId)) return;
      const channel = this.runChannel(runId);
      // Not listened to (a run created and executed here): nothing to tell Redis.
      if (this.subscribed.delete(runId) || this.channels.has(channel)) this.unlisten(channel);
    };
    // Executing here: its attempt replayed from memory, as in one process.
    if (subscription.active) return { active: true, replayedAll: subscription.replayedAll, unsubscribe };
    if (options?.creating) {
      // Nobody else can have started it: whether to listen beyond this process waits for its creation. A run that
      // executes here is delivered locally (a SUBSCRIBE, a replay and an UNSUBSCRIBE fewer per run), as for a
      // subscription made while it executes; one left to the queue is listened to and replayed as any other.
      let settle!: () => void;
      const replayed = new Promise<void>((resolve) => (settle = resolve));
      const created = (executingHere: boolean) => {
        if (executingHere || !subscribed) settle();
        else this.listenAndReplay(runId, guarded, () => subscribed).then(settle, settle);
      };
      return { active: false, replayed, created, unsubscribe };
    }
    if (this.subscriber.status === "ready") {
      // Off the request's path: what another process sends before the SUBSCRIBE takes effect is in the run's
      // buffer, replayed once it has (events that also came live are skipped by followers, same seq). Skipped
      // when the run started here meanwhile (usually: this process creates and claims it), since local delivery
      // then had it all; a connection dropping meanwhile is caught up by `resubscribed`, as for any subscription.
      return { active: false, replayed: this.listenAndReplay(runId, guarded, () => subscribed), unsubscribe };
    }
    try {
      await this.channelOf(runId);
      // Executing elsewhere (or not started): replay what its attempt buffered so far.
      const replayed = await this.replay(runId, guarded);
      return { active: replayed.entries > 0 && !replayed.ended, unsubscribe };
    } catch (error) {
      unsubscribe();
      throw unreachable(error);
    }
  }

  async lastSeq(runId: string): Promise<number> {
    // The last two entries: a run that ended has its end notice after its last event.
    const latest = await this.commands.xrevrange(this.bufferKey(runId), "+", "-", "COUNT", 2).catch((error: unknown) => {
      throw unreachable(error);
    });
    let seq = -1;
    for (const [, fields] of latest) {
      const message = this.readBuffered(runId, fields);
      if (message?.t === "event") seq = Math.max(seq, message.e.seq);
    }
    return Math.max(await this.local.lastSeq(runId), seq);
  }

  executingLastSeq(runId: string): number | undefined {
    return this.local.executingLastSeq(runId);
  }

  async watchThread(threadId: string, onRunStart: (runId: string) => void): Promise<() => void> {
    const first = !this.local.hasThreadWatchers(threadId);
    const unwatch = await this.local.watchThread(threadId, onRunStart);
    const stop = () => {
      unwatch();
      if (!this.local.hasThreadWatchers(threadId)) this.unlisten(this.threadChannel(threadId));
    };
    if (first)
      await this.listen(this.threadChannel(threadId)).catch((error: unknown) => {
        stop();
        throw unreachable(error);
      });
    return stop;
  }

  wakeWorkers(availableAt?: number): void {
    this.local.wakeWorkers(availableAt);
    const text = JSON.stringify({ o: this.origin, t: "wake", at: availableAt } satisfies Message);
    this.outbox().publish(this.wakeChannel, text);
  }

  onWake(handler: (availableAt?: number) => void): void {
    this.local.onWake(handler);
  }

  cancel(runId: string, action: CancelAction): void {
    this.local.cancel(runId, action);
    const text = JSON.stringify({ o: this.origin, t: "cancel", r: runId, why: action } satisfies Message);
    this.outbox().publish(this.cancelChannel, text);
  }

  onCancel(handler: (runId: string, action: CancelAction) => void): void {
    this.local.onCancel(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.flushOutbox();
    await this.local.close();
    this.subscriber.disconnect();
    this.commands.disconnect();
    // What is still queued goes out if Redis is there; otherwise closing must not wait for it.
    if (this.publisher.status === "ready") await this.publisher.quit().catch(() => this.publisher.disconnect());
    else this.publisher.disconnect();
  }

  /**
   * Listens to the run's channel, then replays its buffer to `observer` (what another process sent before the
   * SUBSCRIBE took effect; events that also came live are skipped by followers, same seq). No replay once the
   * observer left or heard the end, or when the run started here meanwhile: local delivery then had it all. A
   * connection dropping meanwhile is caught up by `resubscribed`, as for any subscription.
   */
  private listenAndReplay(runId: string, observer: GuardedObserver, observing: () => boolean): Promise<void> {
    return this.channelOf(runId)
      .then(
        async () => {
          if (!observing() || observer.ended || this.local.isExecuting(runId)) return;
          await this.replay(runId, observer);
        },
        () => {},
      )
      .catch(() => {
        if (observing()) observer.onLost();
      });
  }

  /** The run channel's SUBSCRIBE, sent once for all of this process's observers of the run. */
  private channelOf(runId: string): Promise<unknown> {
    let subscribed = this.subscribed.get(runId);
    if (!subscribed) {
      subscribed = this.listen(this.runChannel(runId));
      subscribed.catch(() => this.subscribed.delete(runId));
      this.subscribed.set(runId, subscribed);
    }
    return subscribed;
  }

  private listen(channel: string): Promise<unknown> {
    this.channels.add(channel);
    return this.subscriber.subscribe(channel);
  }

  private unlisten(channel: string): void {
    this.channels.delete(channel);
    void this.subscriber.unsubscribe(channel).catch(() => {}); // a dropped connection forgets it anyway
  }

  /** Hands `observer` what the run's buffer holds; events it already has are skipped by followers (same seq). */
  private async replay(runId: string, observer: RunObserver): Promise<{ entries: number; ended: boolean }> {
    const entries = await this.commands.xrange(this.bufferKey(runId), "-", "+");
    let ended = false;
    for (const [, fields] of entries) {
      const message = this.readBuffered(runId, fields);
      if (message?.t === "event") observer.onEvent(message.e);
      if (message?.t === "end") {
        observer.onEnd(message.n);
        ended = true;
      }
    }
    return { entries: entries.length, ended };
  }

  /**
   * The subscriber connection is back: once its channels are subscribed again
   * (messages sent from then on arrive), followers of runs executing elsewhere
   * get what the buffers hold (messages sent meanwhile were lost to pub/sub)
   * and check the log and runs themselves.
   */
  private async resubscribed(): Promise<void> {
    try {
      await this.subscriber.subscribe(...this.channels);
      this.local.wakeWorkers(); // a wake-up may have been lost too
      for (const runId of this.local.observedRuns()) {
        if (this.local.isExecuting(runId)) continue;
        const relay: RunObserver = {
          onEvent: (event) => this.local.deliver(runId, event),
          onEnd: (notice) => this.local.end(runId, notice),
        };
        await this.replay(runId, relay).catch(() => {}); // Redis went away again: the next reconnection replays
        this.local.deliverLost(runId);
      }
    } catch (err) {
      this.logger.warn({ err }, "catching up after Redis came back failed; the next reconnection tries again");
    }
  }

  /** Buffers the message in the run's stream, then announces it (in that order, on one connection). */
  private broadcastToRun(runId: string, message: Message, last: boolean): void {
    const text = JSON.stringify(message);
    const key = this.bufferKey(runId);
    const pipeline = this.outbox().xadd(key, "*", "m", text);
    if (last) pipeline.expire(key, BUFFER_TTL_SECONDS);
    pipeline.publish(this.runChannel(runId), text);
  }

  /**
   * This turn's pipeline, sent once the turn is over (setImmediate runs before
   * the continuation of a run that yields to let its events out).
   */
  private outbox(): ChainableCommander {
    if (!this.outgoing) {
      this.outgoing = this.publisher.pipeline();
      setImmediate(() => this.flushOutbox());
    }
    return this.outgoing;
  }

  private flushOutbox(): void {
    const pipeline = this.outgoing;
    this.outgoing = undefined;
    if (pipeline) this.send(pipeline);
  }

  /** Fire and forget, but not silently: a command Redis refused is logged (at most once per interval). */
  private send(batch: { exec(): Promise<[Error | null, unknown][] | null> }): void {
    batch.exec().then(
      (results) => {
        const failed = results?.find(([error]) => error)?.[0];
        if (failed) this.warn("send", failed, "a Redis command failed");
      },
      (err: unknown) => this.warn("send", err, "a Redis command failed"),
    );
  }

  private watchConnection(connection: Redis, name: string, onBack?: () => void): void {
    let dropped = false;
    connection.on("error", (err: unknown) => this.warn(name, err, `Redis connection (${name}) failed; reconnecting`));
    connection.on("close", () => (dropped = !this.closed));
    connection.on("ready", () => {
      if (!dropped) return;
      dropped = false;
      this.logger.info({ connection: name }, "Redis connection is back");
      onBack?.();
    });
  }

  private readonly warned = new Map<string, number>();

  private warn(kind: string, err: unknown, message: string): void {
    if (this.closed) return;
    const now = Date.now();
    if (now - (this.warned.get(kind) ?? 0) < LOG_EVERY_MS) return;
    this.warned.set(kind, now);
    this.logger.warn({ err }, message);
  }

  /** An entry of the run's live buffer (`m` and the message), or undefined when it is not one of Berth's. */
  private readBuffered(runId: string, fields: string[]): Message | undefined {
    const text = fields.length === 2 && fields[0] === "m" ? fields[1]! : JSON.stringify(fields).slice(0, 1000);
    return this.reader.read(REDIS_MESSAGES.buffered, text, this.bufferKey(runId));
  }

  /**
   * A message on a channel this process listens to. Whatever it holds, it
   * must not throw: the exception would surface in ioredis' reader and end
   * the process.
   */
  private receive(channel: string, text: string): void {
    try {
      this.dispatch(channel, text);
    } catch (err) {
      this.logger.error({ err, channel }, "handling a broker message failed");
    }
  }

  private dispatch(channel: string, text: string): void {
    // This process's own messages (delivered locally already) begin with its origin: not parsed to be dropped.
    if (text.startsWith(this.ownMessages)) return;
    if (channel === this.wakeChannel) {
      const message = this.reader.read(REDIS_MESSAGES.wake, text, channel);
      if (message && message.o !== this.origin) this.local.wakeWorkers(message.at);
    } else if (channel === this.cancelChannel) {
      const message = this.reader.read(REDIS_MESSAGES.cancel, text, channel);
      if (message && message.o !== this.origin) this.local.cancel(message.r, message.why);
    } else if (channel.startsWith(`${this.prefix}:thread:`)) {
      const message = this.reader.read(REDIS_MESSAGES.thread, text, channel);
      if (message && message.o !== this.origin) this.local.runStarted(message.r, channel.slice(`${this.prefix}:thread:`.length));
    } else if (channel.startsWith(`${this.prefix}:run:`)) {
      const runId = channel.slice(`${this.prefix}:run:`.length);
      const message = this.reader.read(REDIS_MESSAGES.run, text, channel);
      // Possibly one of the run's own messages, mangled or too large: its followers check the log and the run.
      if (!message) this.local.deliverLost(runId);
      else if (message.o !== this.origin) this.deliverToRun(runId, message);
    }
  }

  private deliverToRun(runId: string, message: RunMessage): void {
    if (message.t === "event") this.local.deliver(runId, message.e);
    else if (message.t === "logged") this.local.deliverLogged(runId);
    else this.local.end(runId, { status: message.n.status, output: message.n.output });
  }
}

/** An observer that hears of a run's end once, and of nothing after it (a replay may come after the end). */
class GuardedObserver implements RunObserver {
  ended = false;

  constructor(private readonly observer: RunObserver) {}

  onEvent(event: StoredEvent): void {
    if (!this.ended) this.observer.onEvent(event);
  }

  onEnd(notice: RunEndNotice): void {
    if (this.ended) return;
    this.ended = true;
    this.observer.onEnd(notice);
  }

  onLogged(): void {
    if (!this.ended) this.observer.onLogged?.();
  }

  onLost(): void {
    if (!this.ended) this.observer.onLost?.();
  }
}

/** A request that needs Redis while it is unreachable is a 503, not a 500. */
function unreachable(error: unknown): Error {
  if (error instanceof ServiceUnavailableError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new ServiceUnavailableError(`Live event broker (Redis) unavailable: ${reason}`);
}
