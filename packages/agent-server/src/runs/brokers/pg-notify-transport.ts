import pg from "pg";
import type { Logger } from "../../logger.js";
import type { SignalHandlers, SignalTransport } from "./signal-broker.js";

/** Pause before opening a dropped LISTEN connection again. */
const RELISTEN_MS = 1000;

/** A NOTIFY channel is an identifier: lowercase letters, digits and underscores, at most 63 bytes. */
export function channelName(prefix: string): string {
  const name = `${prefix}_runs`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  return (/^[a-z_]/.test(name) ? name : `_${name}`).slice(0, 63);
}

/**
 * Signals on one PostgreSQL LISTEN/NOTIFY channel. NOTIFY is not replayed:
 * notices sent while the LISTEN connection is down are lost, so after
 * reconnecting it tells the broker to catch up from the database.
 */
export class PgNotifyTransport implements SignalTransport {
  /** One connection, so this process's messages arrive in the order they were sent; a pool reconnects by itself. */
  private readonly notifier: pg.Pool;
  private listener: pg.Client | undefined;
  private handlers: SignalHandlers | undefined;
  private relistenTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly channel: string,
    private readonly logger?: Logger,
  ) {
    this.notifier = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    this.notifier.on("error", () => {}); // an idle connection dropped: the next NOTIFY opens another
  }

  async start(handlers: SignalHandlers): Promise<void> {
    this.handlers = handlers;
    await this.listen().catch(async (error: unknown) => {
      await this.notifier.end();
      throw error;
    });
  }

  send(payload: string): void {
    if (this.closed) return;
    this.notifier
      .query("SELECT pg_notify($1, $2)", [this.channel, payload])
      .catch((err: unknown) => this.logger?.error({ err, payload }, "NOTIFY failed"));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.relistenTimer);
    const listener = this.listener;
    this.listener = undefined;
    await Promise.allSettled([listener?.end(), this.notifier.end()]);
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
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
    this.handlers?.lost();
  }
}
