import { randomUUID } from "node:crypto";
import pg from "pg";
import type { Logger } from "../logger.js";
import type { RunRepository, RunStatus, StoredEvent } from "../storage/types.js";
import type { RunBroker, RunEndNotice, RunListener, RunSubscription } from "./broker.js";
import { InProcessBroker } from "./in-process-broker.js";
import { LogFollowers } from "./log-followers.js";
import type { AbortReason } from "./run-control.js";

/** At most one "events flushed" notice per run this often (the event writer flushes every 25 ms). */
const FLUSH_NOTICE_MS = 30;
/** Pause before opening a dropped LISTEN connection again. */
const RELISTEN_MS = 1000;

/** Small on purpose (NOTIFY payloads stop at 8000 bytes): events and outputs stay in the database. */
type Message =
  | { o: string; t: "wake"; at?: number }
  | { o: string; t: "cancel"; r: string; why: AbortReason }
  | { o: string; t: "start"; r: string; th: string }
  | { o: string; t: "flushed"; r: string }
  | { o: string; t: "end"; r: string; s: RunStatus };

/** A NOTIFY channel is an identifier: lowercase letters, digits and underscores, at most 63 bytes. */
export function channelName(prefix: string): string {
  const name = `${prefix}_runs`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  return (/^[a-z_]/.test(name) ? name : `_${name}`).slice(0, 63);
}

/**
 * The broker across processes sharing a PostgreSQL database without Redis
 * (the slower mode). Signals travel on one LISTEN/NOTIFY channel; events
 * never do: the executing process says when a batch reached `run_events`,
 * and processes following the run read the log from where they stopped.
 * Followers are thus ~30-60 ms behind the run, and subscribing replays
 * nothing already logged (followers read the log themselves, as followRun
 * does). Messages this process sent itself are delivered locally.
 */
export class PostgresBroker implements RunBroker {
  private readonly local = new InProcessBroker();
  private readonly origin = randomUUID();
  private readonly followers: LogFollowers;
  /** Runs whose last "flushed" notice went out less than FLUSH_NOTICE_MS ago, and whether another one is due. */
  private readonly cooldowns = new Map<string, { again: boolean; timer: NodeJS.Timeout }>();
  private listener: pg.Client | undefined;
  private relistenTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly databaseUrl: string,
    /** One connection, so this process's messages arrive in the order they were sent; a pool reconnects by itself. */
    private readonly notifier: pg.Pool,
    private readonly runs: RunRepository,
    private readonly channel: string,
    private readonly logger?: Logger,
  ) {
    this.followers = new LogFollowers(runs, this.local, logger);
  }

  static async connect(databaseUrl: string, runs: RunRepository, channelPrefix: string, logger?: Logger): Promise<PostgresBroker> {
    const notifier = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    notifier.on("error", () => {}); // an idle connection dropped: the next NOTIFY opens another
    const broker = new PostgresBroker(databaseUrl, notifier, runs, channelName(channelPrefix), logger);
    await broker.listen().catch(async (error: unknown) => {
      await notifier.end();
      throw error;
    });
    return broker;
  }

  begin(runId: string, threadId: string): void {
    this.local.begin(runId, threadId);
    this.send({ o: this.origin, t: "start", r: runId, th: threadId });
  }

  /** Live for this process only: other processes read the log once `logged` tells them. */
  publish(runId: string, event: StoredEvent): void {
    this.local.publish(runId, event);
  }

  logged(runId: string): void {
    const cooling = this.cooldowns.get(runId);
    if (cooling) cooling.again = true; // sent when the cooldown ends, so the latest batch is announced too
    else this.announceFlushed(runId);
  }

  end(runId: string, notice: RunEndNotice): void {
    clearTimeout(this.cooldowns.get(runId)?.timer); // the end notice makes readers take the rest
    this.cooldowns.delete(runId);
    this.local.end(runId, notice);
    this.send({ o: this.origin, t: "end", r: runId, s: notice.status });
  }

  async subscribe(runId: string, listener: RunListener): Promise<RunSubscription> {
    const subscription = this.local.subscribeSync(runId, listener);
    const unsubscribe = () => {
      subscription.unsubscribe();
      if (!this.local.hasListeners(runId)) this.followers.forget(runId);
    };
    if (subscription.active) return { active: true, unsubscribe };
    // Listening before reading the row: a run it shows running ends with a notice received after this point.
    const [run] = await Promise.all([this.runs.get(runId), this.followers.follow(runId)]);
    return { active: run?.status === "running", unsubscribe };
  }

  async lastSeq(runId: string): Promise<number> {
    return Math.max(await this.local.lastSeq(runId), await this.runs.lastEventSeq(runId));
  }

  watchThread(threadId: string, onRunStart: (runId: string) => void): Promise<() => void> {
    return this.local.watchThread(threadId, onRunStart);
  }

  wakeWorkers(availableAt?: number): void {
    this.local.wakeWorkers(availableAt);
    this.send({ o: this.origin, t: "wake", at: availableAt });
  }

  onWake(handler: (availableAt?: number) => void): void {
    this.local.onWake(handler);
  }

  cancel(runId: string, reason: AbortReason): void {
    this.local.cancel(runId, reason);
    this.send({ o: this.origin, t: "cancel", r: runId, why: reason });
  }

  onCancel(handler: (runId: string, reason: AbortReason) => void): void {
    this.local.onCancel(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.relistenTimer);
    for (const { timer } of this.cooldowns.values()) clearTimeout(timer);
    this.cooldowns.clear();
    await this.local.close();
    const listener = this.listener;
    this.listener = undefined;
    await Promise.allSettled([listener?.end(), this.notifier.end()]);
  }

  private announceFlushed(runId: string): void {
    this.send({ o: this.origin, t: "flushed", r: runId });
    const cooling = {
      again: false,
      timer: setTimeout(() => {
        this.cooldowns.delete(runId);
        if (cooling.again) this.announceFlushed(runId);
      }, FLUSH_NOTICE_MS),
    };
    this.cooldowns.set(runId, cooling);
  }

  private send(message: Message): void {
    if (this.closed) return;
    this.notifier
      .query("SELECT pg_notify($1, $2)", [this.channel, JSON.stringify(message)])
      .catch((err: unknown) => this.logger?.error({ err, message }, "NOTIFY failed"));
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on("notification", ({ channel, payload }) => {
      if (channel === this.channel && payload) this.receive(payload);
    });
    client.on("error", (err) => this.dropped(client, err));
    client.on("end", () => this.dropped(client));
    await client
      .connect()
      .then(() => client.query(`LISTEN "${this.channel}"`))
      .catch(async (error: unknown) => {
        await client.end().catch(() => {});
        throw error;
      });
    this.listener = client;
  }

  /** Notices sent while the LISTEN connection is down are lost: reconnect, then catch up from the database. */
  private dropped(client: pg.Client, err?: Error): void {
    if (client !== this.listener || this.closed) return;
    this.listener = undefined;
    this.logger?.warn({ err }, "lost the PostgreSQL LISTEN connection; reconnecting");
    void client.end().catch(() => {});
    this.relistenTimer = setTimeout(() => void this.relisten(), RELISTEN_MS);
  }

  private async relisten(): Promise<void> {
    const listening = await this.listen().then(
      () => true,
      (err: unknown) => void this.logger?.warn({ err }, "reconnecting the PostgreSQL LISTEN connection failed; retrying"),
    );
    if (this.closed) return void this.listener?.end().catch(() => {});
    if (!listening) return void (this.relistenTimer = setTimeout(() => void this.relisten(), RELISTEN_MS));
    this.local.wakeWorkers(); // a run may have been created meanwhile
    this.followers.resync();
  }

  private receive(payload: string): void {
    let message: Message;
    try {
      message = JSON.parse(payload) as Message;
    } catch {
      return; // not ours: anyone may NOTIFY the channel
    }
    if (message.o === this.origin) return;
    switch (message.t) {
      case "wake":
        return this.local.wakeWorkers(message.at);
      case "cancel":
        return this.local.cancel(message.r, message.why);
      case "start":
        return this.local.runStarted(message.r, message.th);
      case "flushed":
        return this.followers.flushed(message.r);
      case "end":
        return this.followers.ended(message.r, message.s);
    }
  }
}
