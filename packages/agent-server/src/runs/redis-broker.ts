import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { StoredEvent } from "../storage/types.js";
import type { RunBroker, RunEndNotice, RunListener, RunSubscription } from "./broker.js";
import { InProcessBroker } from "./in-process-broker.js";
import type { AbortReason } from "./run-control.js";

/** How long a run's live buffer stays in Redis after the run ended (late followers read the log anyway). */
const BUFFER_TTL_SECONDS = 300;

type Message =
  | { o: string; t: "event"; e: StoredEvent }
  | { o: string; t: "end"; n: RunEndNotice }
  | { o: string; t: "start"; r: string }
  | { o: string; t: "wake"; at?: number }
  | { o: string; t: "cancel"; r: string; why: AbortReason };

/**
 * The broker across processes. Each run's current attempt is buffered in a
 * Redis stream (so a follower in another process catches up with what was
 * produced before it subscribed, flushed to the log or not) and announced on
 * the run's pub/sub channel; wake-ups and cancellations are broadcast.
 * Messages this process sent itself are delivered locally, not via Redis.
 */
export class RedisBroker implements RunBroker {
  private readonly local = new InProcessBroker();
  private readonly origin = randomUUID();

  private constructor(
    private readonly commands: Redis,
    private readonly subscriber: Redis,
    private readonly prefix: string,
  ) {
    subscriber.on("message", (channel: string, text: string) => this.receive(channel, text));
  }

  static async connect(url: string, prefix = "berth"): Promise<RedisBroker> {
    const commands = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
    await commands.connect();
    const subscriber = commands.duplicate();
    await subscriber.connect();
    const broker = new RedisBroker(commands, subscriber, prefix);
    await subscriber.subscribe(broker.wakeChannel, broker.cancelChannel);
    return broker;
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
    void this.commands.multi().del(this.bufferKey(runId)).publish(this.threadChannel(threadId), message).exec();
  }

  publish(runId: string, event: StoredEvent): void {
    this.local.publish(runId, event);
    this.broadcastToRun(runId, { o: this.origin, t: "event", e: event }, false);
  }

  end(runId: string, notice: RunEndNotice): void {
    this.local.end(runId, notice);
    this.broadcastToRun(runId, { o: this.origin, t: "end", n: notice }, true);
  }

  async subscribe(runId: string, listener: RunListener): Promise<RunSubscription> {
    const subscription = this.local.subscribeSync(runId, listener);
    if (subscription.firstListener) await this.subscriber.subscribe(this.runChannel(runId));
    let active = subscription.active;
    if (!active) {
      // Executing elsewhere (or not started): replay what its attempt buffered so far.
      let ended = false;
      const entries = await this.commands.xrange(this.bufferKey(runId), "-", "+");
      for (const [, fields] of entries) {
        const message = JSON.parse(fields[1]) as Message;
        if (message.t === "event") listener.onEvent(message.e);
        if (message.t === "end") {
          listener.onEnd(message.n);
          ended = true;
        }
      }
      active = entries.length > 0 && !ended;
    }
    return {
      active,
      unsubscribe: () => {
        subscription.unsubscribe();
        if (!this.local.hasListeners(runId)) void this.subscriber.unsubscribe(this.runChannel(runId));
      },
    };
  }

  async lastSeq(runId: string): Promise<number> {
    const [last] = await this.commands.xrevrange(this.bufferKey(runId), "+", "-", "COUNT", 1);
    const message = last ? (JSON.parse(last[1][1]) as Message) : undefined;
    return Math.max(await this.local.lastSeq(runId), message?.t === "event" ? message.e.seq : -1);
  }

  async watchThread(threadId: string, onRunStart: (runId: string) => void): Promise<() => void> {
    const first = !this.local.hasThreadWatchers(threadId);
    const unwatch = await this.local.watchThread(threadId, onRunStart);
    if (first) await this.subscriber.subscribe(this.threadChannel(threadId));
    return () => {
      unwatch();
      if (!this.local.hasThreadWatchers(threadId)) void this.subscriber.unsubscribe(this.threadChannel(threadId));
    };
  }

  wakeWorkers(availableAt?: number): void {
    this.local.wakeWorkers(availableAt);
    void this.commands.publish(this.wakeChannel, JSON.stringify({ o: this.origin, t: "wake", at: availableAt } satisfies Message));
  }

  onWake(handler: (availableAt?: number) => void): void {
    this.local.onWake(handler);
  }

  cancel(runId: string, reason: AbortReason): void {
    this.local.cancel(runId, reason);
    const message: Message = { o: this.origin, t: "cancel", r: runId, why: reason };
    void this.commands.publish(this.cancelChannel, JSON.stringify(message));
  }

  onCancel(handler: (runId: string, reason: AbortReason) => void): void {
    this.local.onCancel(handler);
  }

  async close(): Promise<void> {
    await this.local.close();
    this.subscriber.disconnect();
    await this.commands.quit();
  }

  /** Buffers the message in the run's stream, then announces it (in that order, on one connection). */
  private broadcastToRun(runId: string, message: Message, last: boolean): void {
    const text = JSON.stringify(message);
    const key = this.bufferKey(runId);
    const pipeline = this.commands.pipeline().xadd(key, "*", "m", text);
    if (last) pipeline.expire(key, BUFFER_TTL_SECONDS);
    void pipeline.publish(this.runChannel(runId), text).exec();
  }

  private receive(channel: string, text: string): void {
    const message = JSON.parse(text) as Message;
    if (message.o === this.origin) return;
    switch (message.t) {
      case "wake":
        return this.local.wakeWorkers(message.at);
      case "cancel":
        return this.local.cancel(message.r, message.why);
      case "start":
        return this.local.runStarted(message.r, channel.slice(`${this.prefix}:thread:`.length));
      case "event":
        return this.local.deliver(channel.slice(`${this.prefix}:run:`.length), message.e);
      case "end":
        return this.local.end(channel.slice(`${this.prefix}:run:`.length), message.n);
    }
  }
}
