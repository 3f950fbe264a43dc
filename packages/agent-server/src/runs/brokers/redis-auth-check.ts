import { Redis } from "ioredis";
import type { Logger } from "../../logger.js";

/** The check is one connection attempt; a server that does not answer by then is left alone. */
const CHECK_TIMEOUT_MS = 5_000;

/**
 * Warns when the Redis server of REDIS_URL runs commands for a client that
 * did not authenticate: then whoever reaches its port, a deployment's code
 * included, can read the live events of runs and send the agent servers
 * messages. It connects once with the URL minus its user and password and
 * sends PING; never throws.
 */
export async function warnIfRedisTrustsAnyone(url: string, logger: Logger): Promise<void> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return; // the broker's connection reports the bad URL
  }
  target.username = "";
  target.password = "";
  const redis = new Redis(target.toString(), {
    lazyConnect: true,
    connectTimeout: CHECK_TIMEOUT_MS,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on("error", () => {}); // the outcome is PING's
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    const refused = err instanceof Error && /NOAUTH|NOPERM|WRONGPASS/.test(err.message);
    if (refused) logger.debug("Redis (REDIS_URL) requires authentication");
    else logger.debug({ err }, "could not check whether Redis (REDIS_URL) requires authentication");
    return;
  } finally {
    redis.disconnect();
  }
  logger.warn(
    { setting: "REDIS_URL", host: target.host, risk: "redis_without_authentication" },
    `Redis (REDIS_URL) runs commands without authentication: whoever reaches ${target.host}, a deployment's ` +
      "code included, can read the live events of runs and send this server messages. Require a password, " +
      "and give each deployment an ACL user limited to its BERTH_REDIS_PREFIX (docs/security.md, Data plane)",
  );
}
