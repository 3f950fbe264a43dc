import { REVISION_STATUSES } from "@berth/listener-protocol";
import { type Logger, notifyChannelName, type NotifyHandlers, PostgresNotifyChannel } from "@berth/service-kit";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { z } from "zod";
import {
  type ChangeFeed,
  type ChangeHandler,
  type ChangeMessage,
  type ChangeTopic,
  type ChangeTopics,
  InProcessChangeFeed,
  type RevisionCause,
} from "./change-feed.js";

/**
 * The channel of the control planes whose tables are in `schema`: NOTIFY
 * channels are the database's, and control planes in other schemas of it
 * are other platforms.
 */
export const changeChannel = (schema: string) => notifyChannelName(`berth_cp_changes_${schema}`);

/** NOTIFY refuses payloads of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7999;
/** A status message crosses cut to this (a failed build's quotes its output; terminal lines show 300 characters). */
const MAX_MESSAGE_CHARS = 1000;

/** What goes between processes: whom it is from, so a process skips its own (it told them already). */
interface Envelope {
  origin: string;
  message: ChangeMessage;
}

/** How the feed sends and hears payloads; PostgreSQL LISTEN/NOTIFY in production. */
export interface NotifyTransport {
  start(handlers: NotifyHandlers): Promise<void>;
  send(payload: string): void;
  close(): Promise<void>;
}

const id = z.string().min(1).max(256);
const text = (max: number) => z.string().max(max);
const status = z.enum(REVISION_STATUSES);
const CAUSES = ["create", "patch", "rebuild", "redeploy", "push"] as const satisfies readonly RevisionCause[];
const revisionBase = {
  deployment: z.object({ id, name: text(1024) }),
  revision: z.object({ id, number: z.number().int().nonnegative() }),
  status,
  message: text(MAX_MESSAGE_CHARS),
};

/**
 * Whoever can reach the database can NOTIFY on the channel: every payload is
 * checked against what a control plane sends, and anything else is dropped.
 */
const envelopeSchema = z.object({
  origin: id,
  message: z.discriminatedUnion("topic", [
    z.object({
      topic: z.literal("deployment"),
      change: z.union([
        z.object({ change: z.enum(["created", "updated", "deleted", "reported"]), deployment_id: id }),
        z.object({ change: z.literal("listener_deleted"), listener_id: id }),
      ]),
    }),
    z.object({
      topic: z.literal("revision"),
      change: z.discriminatedUnion("kind", [
        z.object({ ...revisionBase, kind: z.literal("created"), cause: z.enum(CAUSES) }),
        z.object({ ...revisionBase, kind: z.literal("status"), previous: status, url: text(2048).nullable() }),
      ]),
    }),
    z.object({ topic: z.literal("logs"), change: z.object({ deployment_id: id }) }),
  ]),
}) satisfies z.ZodType<Envelope>;

/**
 * The feed of control-plane processes sharing one PostgreSQL database: a
 * change is told to this process's followers at once, and to the other
 * processes' through NOTIFY.
 */
export class PostgresChangeFeed implements ChangeFeed {
  readonly hearsOtherProcesses = true;
  private readonly local = new InProcessChangeFeed();
  private readonly origin = randomUUID();

  private constructor(
    private readonly transport: NotifyTransport,
    private readonly logger?: Logger,
  ) {}

  /** Resolves once changes published by other processes from now on are heard. */
  static async open(transport: NotifyTransport, logger?: Logger): Promise<PostgresChangeFeed> {
    const feed = new PostgresChangeFeed(transport, logger);
    await transport.start({
      receive: (payload) => feed.receive(payload),
      // Followers read again every recheckMs: what was lost is seen then.
      lost: () => logger?.warn("changes of other control-plane processes may have been missed"),
    });
    return feed;
  }

  /** The feed over a LISTEN/NOTIFY channel of the database, named after the schema the URL selects. */
  static async connect(databaseUrl: string, logger?: Logger): Promise<PostgresChangeFeed> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const schema = await client
      .query<{ schema: string }>("SELECT current_schema() AS schema")
      .then((result) => result.rows[0]!.schema)
      .finally(() => client.end());
    return PostgresChangeFeed.open(new PostgresNotifyChannel(databaseUrl, changeChannel(schema), logger), logger);
  }

  publish<T extends ChangeTopic>(topic: T, change: ChangeTopics[T]): void {
    this.local.publish(topic, change);
    const message = { topic, change: crossing(topic, change) } as ChangeMessage;
    const payload = JSON.stringify({ origin: this.origin, message } satisfies Envelope);
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
      this.logger?.warn(
        { topic, bytes: Buffer.byteLength(payload) },
        "a change too large for NOTIFY is told in this process only",
      );
      return;
    }
    this.transport.send(payload);
  }

  subscribe<T extends ChangeTopic>(topic: T, handler: ChangeHandler<T>): () => void {
    return this.local.subscribe(topic, handler);
  }

  async close(): Promise<void> {
    await this.transport.close();
    await this.local.close();
  }

  private receive(payload: string): void {
    let parsed: z.infer<typeof envelopeSchema> | undefined;
    try {
      parsed = envelopeSchema.safeParse(JSON.parse(payload)).data;
    } catch {
      // not JSON: dropped below
    }
    if (!parsed) {
      this.logger?.warn(
        { payload: payload.slice(0, 200) },
        "dropped a malformed change notice: someone else can NOTIFY on the channel",
      );
      return;
    }
    if (parsed.origin === this.origin) return;
    const { topic, change } = parsed.message;
    this.local.publish(topic, change as ChangeTopics[typeof topic]);
  }
}

/** A change as it crosses to other processes: a revision's message cut to fit NOTIFY. */
function crossing<T extends ChangeTopic>(topic: T, change: ChangeTopics[T]): ChangeTopics[T] {
  if (topic !== "revision") return change;
  const event = change as ChangeTopics["revision"];
  return { ...event, message: event.message.slice(0, MAX_MESSAGE_CHARS) } as ChangeTopics[T];
}
