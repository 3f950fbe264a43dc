import { notifyChannelName, PostgresNotifyChannel } from "@berth/service-kit";
import type { Logger } from "../../logger.js";
import type { RunRepository } from "../../storage/types.js";
import { SignalBroker } from "./signal-broker.js";

/**
 * The broker across processes sharing a PostgreSQL database without Redis
 * (the slower mode): signals travel on one LISTEN/NOTIFY channel named from
 * `channelPrefix`, events are read back from the log.
 */
export class PostgresBroker extends SignalBroker {
  static async connect(
    databaseUrl: string,
    runs: RunRepository,
    channelPrefix: string,
    logger?: Logger,
  ): Promise<PostgresBroker> {
    const channel = new PostgresNotifyChannel(databaseUrl, notifyChannelName(`${channelPrefix}_runs`), logger);
    const broker = new PostgresBroker(channel, runs, logger);
    await broker.listen();
    return broker;
  }
}
