import { randomUUID } from "node:crypto";
import type { Socket } from "node:net";
import type { WebSocket } from "ws";
import type { Access } from "../services/authorization.js";
import { matchesFilter } from "../services/protocol-events.js";
import type { ProtocolFollower } from "../runs/streaming/follow-protocol.js";
import type { ProtocolReply, RunDecorator, ThreadProtocolService } from "../services/thread-protocol.js";
import type { StoredEvent } from "../storage/types.js";
import { ProtocolCommandSchema, type SubscriptionFilter, SubscriptionFilterSchema } from "./schemas/protocol.js";

/** How many events a subscription replays before its ack at most: those after it follow the ack as live ones do. */
const REPLAY_LIMIT = 10_000;

/** A client this far behind (bytes queued on its socket) is disconnected: it resumes with `since`. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/** How often an idle socket is pinged, so proxies keep it open and a dead peer is noticed. */
const PING_INTERVAL_MS = 15_000;

/** The open sockets of the process, pinged by one interval rather than a timer each. */
const pinged = new Set<WebSocket>();
let pingTimer: NodeJS.Timeout | undefined;

function startPinging(socket: WebSocket): void {
  pinged.add(socket);
  if (pingTimer) return;
  pingTimer = setInterval(() => {
    for (const open of pinged) open.ping();
  }, PING_INTERVAL_MS);
  pingTimer.unref();
}

function stopPinging(socket: WebSocket): void {
  pinged.delete(socket);
  if (pinged.size > 0 || !pingTimer) return;
  clearInterval(pingTimer);
  pingTimer = undefined;
}

/**
 * The bytes of an event's text frame: the subscribers of a thread in this
 * process share each event object, so its data is encoded once for all.
 */
const payloads = new WeakMap<StoredEvent, Buffer>();

function payloadOf(event: StoredEvent): Buffer {
  let payload = payloads.get(event);
  if (!payload) {
    payload = Buffer.from(event.data);
    payloads.set(event, payload);
  }
  return payload;
}

/**
 * One WebSocket session of protocol v2 on a thread: commands come as text
 * frames and are answered in order (a reply never overtakes an earlier one);
 * each subscription replays what the thread holds that it matches (its log,
 * or the run in progress from this process's memory) after its ack, then
 * follows the thread live. Subscriptions live as long as the socket.
 */
export class ProtocolSocketSession {
  private readonly subscriptions = new Map<string, AbortController>();
  private queue: Promise<void> = Promise.resolve();

  /** `connection`: the TCP connection under the WebSocket; corked, the frames of a replay leave in one write. */
  constructor(
    private readonly socket: WebSocket,
    private readonly connection: Pick<Socket, "cork" | "uncork">,
    private readonly threadId: string,
    private readonly protocol: ThreadProtocolService,
    private readonly access: Access,
    private readonly decorate: RunDecorator,
  ) {
    socket.on("message", (data, isBinary) => {
      const text = isBinary ? undefined : data.toString();
      this.queue = this.queue.then(() => this.receive(text));
    });
    socket.on("close", () => this.close());
    socket.on("error", () => this.close());
    startPinging(socket);
  }

  private close(): void {
    stopPinging(this.socket);
    for (const controller of this.subscriptions.values()) controller.abort();
    this.subscriptions.clear();
  }

  private async receive(text: string | undefined): Promise<void> {
    let frame: unknown;
    try {
      frame = text === undefined ? undefined : JSON.parse(text);
    } catch {
      frame = undefined;
    }
    const command = ProtocolCommandSchema.safeParse(frame);
    if (!command.success) {
      this.send({ type: "error", id: null, error: "invalid_argument", message: "Expected a JSON command {id, method, params?}" });
      return;
    }
    const { id, method, params } = command.data;
    if (method === "subscription.subscribe") return this.subscribe(id, params);
    if (method === "subscription.unsubscribe") return this.unsubscribe(id, params);
    this.send(await this.protocol.command(this.threadId, command.data, this.access, this.decorate));
  }

  private async subscribe(id: number, params: unknown): Promise<void> {
    const parsed = SubscriptionFilterSchema.safeParse(params ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      this.send({ type: "error", id, error: "invalid_argument", message: `${issue.path.join(".")}: ${issue.message}` });
      return;
    }
    const filter = parsed.data;
    const controller = new AbortController();
    let events: ProtocolFollower;
    try {
      events = await this.protocol.events(this.threadId, filter.since ?? 0, this.access, controller.signal);
    } catch (error) {
      this.send({ type: "error", id, error: "invalid_argument", message: (error as Error).message });
      return;
    }
    if (this.socket.readyState !== this.socket.OPEN) {
      controller.abort(); // closed meanwhile: nothing will end this subscription else
      await events.return(undefined);
      return;
    }
    const subscriptionId = randomUUID();
    this.subscriptions.set(subscriptionId, controller);
    // What the thread holds already (its log, or the run in progress from this process's memory) comes before the
    // ack answers; it is sent right after the ack, then each event as it is published.
    let backlog: StoredEvent[] | undefined = [];
    let backlogFull!: () => void;
    const full = new Promise<void>((resolve) => (backlogFull = resolve));
    const send = (event: StoredEvent): boolean => {
      if (!backlog) return this.deliver(event, filter, controller.signal);
      if (backlog.push(event) >= REPLAY_LIMIT) backlogFull();
      return true;
    };
    events.deliverTo(send);
    const following = this.follow(events, send, controller);
    await Promise.race([events.caughtUp, full, following]);
    const replayed = backlog.filter((event) => matchesFilter(event, filter));
    this.connection.cork();
    this.send({
      type: "success",
      id,
      result: { subscription_id: subscriptionId, replayed_events: replayed.length },
      meta: { thread_id: this.threadId, applied_through_seq: backlog.at(-1)?.seq ?? 0 },
    });
    for (const event of replayed) this.socket.send(payloadOf(event), { binary: false });
    this.connection.uncork();
    backlog = undefined;
  }

  private unsubscribe(id: number, params: Record<string, unknown> | undefined): void {
    const subscriptionId = typeof params?.subscription_id === "string" ? params.subscription_id : "";
    const controller = this.subscriptions.get(subscriptionId);
    if (!controller) {
      this.send({ type: "error", id, error: "no_such_subscription", message: `No subscription ${subscriptionId}` });
      return;
    }
    controller.abort();
    this.subscriptions.delete(subscriptionId);
    this.send({ type: "success", id, result: {}, meta: { thread_id: this.threadId, applied_through_seq: 0 } });
  }

  /** Sends `event` if it matches; false once the client is too far behind (then disconnected) or gone. */
  private deliver(event: StoredEvent, filter: SubscriptionFilter, signal: AbortSignal): boolean {
    if (signal.aborted) return false;
    if (!matchesFilter(event, filter)) return true;
    if (this.socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.socket.close(1013, "client too slow: resubscribe with since");
      return false;
    }
    this.socket.send(payloadOf(event), { binary: false });
    return true;
  }

  /** Hands `events` to `send` until the subscription ends; live events in order reach it as they are published. */
  private async follow(
    events: ProtocolFollower,
    send: (event: StoredEvent) => boolean,
    controller: AbortController,
  ): Promise<void> {
    try {
      for await (const event of events) {
        if (!send(event)) return;
      }
    } catch {
      // Following failed (the database went away): the client resubscribes after a reconnect, with `since`.
      if (!controller.signal.aborted) this.socket.close(1011, "event stream failed");
    }
  }

  private send(reply: ProtocolReply): void {
    this.socket.send(JSON.stringify(reply));
  }
}
