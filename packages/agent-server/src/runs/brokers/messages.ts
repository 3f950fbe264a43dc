import { z } from "zod";
import type { Logger } from "../../logger.js";
import type { CancelAction, RunStatus, StoredEvent } from "../../storage/types.js";

/**
 * The messages brokers exchange across processes, and their validation.
 * Whoever can reach the Redis server or the PostgreSQL database can send on
 * Berth's channels, so every message received is checked against the schema
 * of what may arrive where it arrived; anything else is logged and dropped.
 */

/** Largest control message (wake-up, cancellation, run start, signal): they are under 200 bytes, NOTIFY stops at 8000. */
export const MAX_CONTROL_MESSAGE_CHARS = 8192;
/**
 * Largest message on a run's channel or in its live buffer (an event, the
 * run's output): far above what a run sends in practice (request bodies stop
 * at 32 MiB by default). A larger one is dropped; followers then read the log.
 */
export const MAX_RUN_MESSAGE_CHARS = 128 * 1024 * 1024;

/** How much of a dropped message its log line quotes. */
const QUOTED_CHARS = 200;
/** At most this many drop lines per window; the next line after it says how many went unlogged. */
const LOG_LINES_PER_WINDOW = 50;
const LOG_WINDOW_MS = 10_000;

const RUN_STATUSES = ["pending", "running", "success", "error", "timeout", "interrupted"] as const satisfies readonly RunStatus[];
const CANCEL_ACTIONS = ["interrupt", "rollback"] as const satisfies readonly CancelAction[];

const origin = z.string().max(128);
/** Run and thread ids are UUIDs; room for other forms, none for megabytes. */
const id = z.string().min(1).max(256);
/** A line break would end the SSE field the text is written into, and start another. */
const oneLine = (max: number) =>
  z
    .string()
    .max(max)
    .refine((text) => !/[\r\n]/.test(text), "contains a line break");
const availableAt = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional();
const status = z.enum(RUN_STATUSES);
const cancelAction = z.enum(CANCEL_ACTIONS);

const storedEvent = z.object({
  seq: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  event: oneLine(1024),
  data: oneLine(MAX_RUN_MESSAGE_CHARS),
}) satisfies z.ZodType<StoredEvent>;

// What RedisBroker sends, by channel: every kind is accepted only where it is sent.
const redisWake = z.object({ o: origin, t: z.literal("wake"), at: availableAt });
const redisCancel = z.object({ o: origin, t: z.literal("cancel"), r: id, why: cancelAction });
const redisStart = z.object({ o: origin, t: z.literal("start"), r: id });
const redisEvent = z.object({ o: origin, t: z.literal("event"), e: storedEvent });
const redisLogged = z.object({ o: origin, t: z.literal("logged") });
const redisEnd = z.object({ o: origin, t: z.literal("end"), n: z.object({ status, output: z.unknown() }) });

export type RedisMessage =
  | z.infer<typeof redisWake>
  | z.infer<typeof redisCancel>
  | z.infer<typeof redisStart>
  | z.infer<typeof redisEvent>
  | z.infer<typeof redisLogged>
  | z.infer<typeof redisEnd>;

export interface MessageKind<T> {
  schema: z.ZodType<T>;
  maxChars: number;
}

export const REDIS_MESSAGES = {
  wake: { schema: redisWake, maxChars: MAX_CONTROL_MESSAGE_CHARS },
  cancel: { schema: redisCancel, maxChars: MAX_CONTROL_MESSAGE_CHARS },
  thread: { schema: redisStart, maxChars: MAX_CONTROL_MESSAGE_CHARS },
  run: { schema: z.discriminatedUnion("t", [redisEvent, redisLogged, redisEnd]), maxChars: MAX_RUN_MESSAGE_CHARS },
  /** An entry of a run's live buffer. */
  buffered: { schema: z.discriminatedUnion("t", [redisEvent, redisEnd]), maxChars: MAX_RUN_MESSAGE_CHARS },
} satisfies Record<string, MessageKind<RedisMessage>>;

/** What SignalBroker sends (small on purpose: events and outputs stay in the database). */
const signal = z.discriminatedUnion("t", [
  z.object({ o: origin, t: z.literal("wake"), at: availableAt }),
  z.object({ o: origin, t: z.literal("cancel"), r: id, why: cancelAction }),
  z.object({ o: origin, t: z.literal("start"), r: id, th: id }),
  z.object({ o: origin, t: z.literal("flushed"), r: id }),
  z.object({ o: origin, t: z.literal("end"), r: id, s: status }),
]);

export type SignalMessage = z.infer<typeof signal>;

export const SIGNAL_MESSAGES = { schema: signal, maxChars: MAX_CONTROL_MESSAGE_CHARS } satisfies MessageKind<SignalMessage>;

/**
 * Reads received messages: the size is checked before anything is parsed,
 * then the JSON, then its shape; what fails is logged (a line per message,
 * quoting its start) and dropped.
 */
export class MessageReader {
  private windowStart = 0;
  private linesInWindow = 0;
  private unlogged = 0;

  constructor(private readonly logger?: Logger) {}

  /** The message, or undefined when it was dropped. `source` names where it came from, for the log. */
  read<T>(kind: MessageKind<T>, text: string, source: string): T | undefined {
    if (text.length > kind.maxChars) return this.drop(source, text, `larger than ${kind.maxChars} characters`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return this.drop(source, text, "not JSON");
    }
    const parsed = kind.schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
    return this.drop(source, text, `${where}${issue?.message ?? "invalid"}`.slice(0, QUOTED_CHARS));
  }

  private drop(source: string, text: string, reason: string): undefined {
    const now = Date.now();
    if (now - this.windowStart >= LOG_WINDOW_MS) {
      this.windowStart = now;
      this.linesInWindow = 0;
    }
    if (++this.linesInWindow > LOG_LINES_PER_WINDOW) {
      this.unlogged += 1;
      return undefined;
    }
    const quoted = text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}…` : text;
    const unlogged = this.unlogged > 0 ? { unlogged_drops: this.unlogged } : {};
    this.unlogged = 0;
    this.logger?.warn(
      { source, reason, chars: text.length, payload: quoted, ...unlogged },
      "dropped a malformed broker message (someone else can send on Berth's channels: docs/security.md, Data plane)",
    );
    return undefined;
  }
}
