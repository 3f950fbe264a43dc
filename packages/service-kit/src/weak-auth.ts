import type { Logger } from "pino";

/** The check is one connection attempt; a server that does not answer by then is left alone. */
const CHECK_TIMEOUT_MS = 5_000;

/** Thrown from the password callback: the server asked for a password, so it does not let anyone in without one. */
class PasswordRequested extends Error {}

/**
 * Warns when the PostgreSQL server of `url` (the value of the `setting`
 * variable) accepts a connection without a password (`trust` in
 * pg_hba.conf): then whoever reaches its port, a deployment's code included,
 * can read and change every database on it. It connects once with the URL
 * minus its password; never throws and should not be awaited: start-up goes
 * on meanwhile. A server on a Unix socket is not checked (`peer`
 * authentication needs no password and is not weak).
 */
export async function warnIfPostgresTrustsAnyone(url: string, setting: string, logger: Logger): Promise<void> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return; // the database connection itself reports the bad URL
  }
  const socketHost = target.searchParams.get("host") ?? (target.hostname === "" ? (process.env.PGHOST ?? "") : "");
  if (socketHost.startsWith("/")) return;
  target.password = "";
  const [{ default: pg }, { parseIntoClientConfig }] = await Promise.all([import("pg"), import("pg-connection-string")]);
  // pg parses a URL without a password as an empty one, then takes PGPASSWORD or ~/.pgpass instead: not here.
  const { password: _none, ...config } = parseIntoClientConfig(target.toString());
  const client = new pg.Client({
    ...config,
    // Called only when the server asks for a password.
    password: () => {
      throw new PasswordRequested();
    },
    connectionTimeoutMillis: CHECK_TIMEOUT_MS,
  });
  client.on("error", () => {}); // a failure after connecting is of no interest here
  try {
    await client.connect();
  } catch (err) {
    if (err instanceof PasswordRequested) logger.debug({ setting }, "PostgreSQL requires a password");
    else logger.debug({ err, setting }, "could not check whether PostgreSQL requires a password");
    return;
  } finally {
    void client.end().catch(() => {});
  }
  logger.warn(
    { setting, host: target.host, risk: "postgres_without_password" },
    `PostgreSQL (${setting}) accepts connections without a password: whoever reaches ${target.host}, ` +
      "a deployment's code included, can read and change every database on it. Require passwords " +
      "(scram-sha-256 in pg_hba.conf, not trust) and give each service its own role (docs/security.md, Data plane)",
  );
}
