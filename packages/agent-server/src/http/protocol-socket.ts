import { randomUUID } from "node:crypto";
import type { WebSocket } from "ws";
import type { Access } from "../services/authorization.js";
import { matchesFilter } from "../services/protocol-events.js";
import { internEvent } from "../runs/streaming/interned-events.js";
import type { ProtocolReply, RunDecorator, ThreadProtocolService } from "../services/thread-protocol.js";
import type { StoredEvent } from "../storage/types.js";
import { ProtocolCommandSchema, type SubscriptionFilter, SubscriptionFilterSchema } from "./schemas/protocol.js";

/** How many logged events a subscription replays at most. */
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
 * each subscription replays the thread's logged events it matches, after its
 * ack, then follows the thread live. Subscriptions live as long as the socket.
 */
export class ProtocolSocketSession {
  private readonly subscriptions = new Map<string, AbortController>();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly socket: WebSocket,
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
    const filter = SubscriptionFilterSchema.safeParse(params ?? {});
    if (!filter.success) {
      const issue = filter.error.issues[0];
      this.send({ type: "error", id, error: "invalid_argument", message: `${issue.path.join(".")}: ${issue.message}` });
      return;
    }
    let backlog: StoredEvent[];
    try {
      backlog = await this.protocol.logged(this.threadId, filter.data.since ?? 0, REPLAY_LIMIT, this.access);
    } catch (error) {
      this.send({ type: "error", id, error: "invalid_argument", message: (error as Error).message });
      return;
    }
    const subscriptionId = randomUUID();
    const controller = new AbortController();
    this.subscriptions.set(subscriptionId, controller);
    const replayed = backlog.map(internEvent).filter((event) => matchesFilter(event, filter.data));
    this.send({
      type: "success",
      id,
      result: { subscription_id: subscriptionId, replayed_events: replayed.length },
      meta: this.meta(backlog),
    });
    for (const event of replayed) this.socket.send(payloadOf(event), { binary: false });
    const after = backlog.at(-1)?.seq ?? filter.data.since ?? 0;
    void this.follow(filter.data, after, controller.signal);
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

  private async follow(filter: SubscriptionFilter, after: number, signal: AbortSignal): Promise<void> {
    /** Sends the event; false once the client is too far behind (then disconnected) or gone. */
    const send = (event: StoredEvent): boolean => {
      if (signal.aborted) return false;
      if (!matchesFilter(event, filter)) return true;
      if (this.socket.bufferedAmount > MAX_BUFFERED_BYTES) {
        this.socket.close(1013, "client too slow: resubscribe with since");
        return false;
      }
      this.socket.send(payloadOf(event), { binary: false });
      return true;
    };
    try {
      const events = await this.protocol.events(this.threadId, after, this.access, signal);
      // Live events in order go out as they are published; the loop sends the rest.
      events.deliverTo(send);
      for await (const event of events) {
        if (!send(event)) return;
      }
    } catch {
      // Following failed (the database went away): the client resubscribes after a reconnect, with `since`.
      if (!signal.aborted) this.socket.close(1011, "event stream failed");
    }
  }

  private meta(backlog: StoredEvent[]): { thread_id: string; applied_through_seq: number } {
    return { thread_id: this.threadId, applied_through_seq: backlog.at(-1)?.seq ?? 0 };
  }

  private send(reply: ProtocolReply): void {
    this.socket.send(JSON.stringify(reply));
  }
}
