import type pg from "pg";
import type { Logger } from "./logger.js";

/** Pause before opening a dropped LISTEN connection again. */
const RELISTEN_MS = 1000;

/** What a NOTIFY channel hands its user. */
export interface NotifyHandlers {
  /** A payload some process sent on the channel (this one included). */
  receive(payload: string): void;
  /** Payloads may have been lost (the LISTEN connection dropped and came back): read the database again. */
  lost(): void;
}

/** A NOTIFY channel is an identifier: lowercase letters, digits and underscores, at most 63 bytes. */
export function notifyChannelName(name: string): string {
  const channel = name.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  return (/^[a-z_]/.test(channel) ? channel : `_${channel}`).slice(0, 63);
}

/**
 * One PostgreSQL LISTEN/NOTIFY channel between the processes sharing a
 * database: every process receives every payload, in the order each sender
 * sent them. NOTIFY is not replayed: payloads sent while the LISTEN
 * connection is down are lost, so after reconnecting it calls `lost`.
 */
export class PostgresNotifyChannel {
  /** One connection, so this process's payloads arrive in the order they were sent; a pool reconnects by itself. */
  private notifier: pg.Pool | undefined;
  private listener: pg.Client | undefined;
  private handlers: NotifyHandlers | undefined;
  private relistenTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private driver: typeof pg | undefined;

  constructor(
    private readonly databaseUrl: string,
    readonly channel: string,
    private readonly logger?: Logger,
  ) {}

  /** Starts receiving; resolves once payloads sent from now on will be delivered. */
  async start(handlers: NotifyHandlers): Promise<void> {
    // Loaded on first use, as openPostgresDatabase does: a process on SQLite never pays for the driver.
    this.driver = (await import("pg")).default;
    this.handlers = handlers;
    this.notifier = new this.driver.Pool({ connectionString: this.databaseUrl, max: 1 });
    this.notifier.on("error", () => {}); // an idle connection dropped: the next NOTIFY opens another
    await this.listen().catch(async (error: unknown) => {
      await this.notifier?.end();
      throw error;
    });
  }

  /** Fire and forget: a failure is logged. */
  send(payload: string): void {
    if (this.closed || !this.notifier) return;
    this.notifier
      .query("SELECT pg_notify($1, $2)", [this.channel, payload])
      .catch((err: unknown) => this.logger?.error({ err, channel: this.channel }, "NOTIFY failed"));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.relistenTimer);
    const listener = this.listener;
    this.listener = undefined;
    await Promise.allSettled([listener?.end(), this.notifier?.end()]);
  }

  private async listen(): Promise<void> {
    const client = new this.driver!.Client({ connectionString: this.databaseUrl });
    client.on("notification", ({ channel, payload }) => {
      if (channel === this.channel && payload) this.handlers?.receive(payload);
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

  private dropped(client: pg.Client, err?: Error): void {
    if (client !== this.listener || this.closed) return;
    this.listener = undefined;
    this.logger?.warn({ err, channel: this.channel }, "lost the PostgreSQL LISTEN connection; reconnecting");
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
    this.handlers?.lost();
  }
}
