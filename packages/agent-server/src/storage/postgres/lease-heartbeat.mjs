// Worker thread: renews the leases of the runs one worker process executes, on
// its own connection and event loop, so a graph that blocks the main thread
// cannot let its run's lease lapse (and have it executed twice). Runs whose
// lease another attempt took are reported back, so their execution stops.
import { parentPort, workerData } from "node:worker_threads";
import pg from "pg";

const { databaseUrl, owner, leaseMs } = workerData;
/** run_id -> attempt of the runs to renew. */
const held = new Map();
let client;
/** Set by "stop": a connection that opens after it is closed at once, or the thread would never exit. */
let stopping = false;

/** One connection, opened again after it failed (a database restart must not end renewals for good). */
async function connection() {
  if (!client) {
    const fresh = new pg.Client({ connectionString: databaseUrl });
    fresh.on("error", () => {
      if (client === fresh) client = undefined;
    });
    await fresh.connect();
    if (stopping) {
      await fresh.end().catch(() => {});
      throw new Error("stopping");
    }
    client = fresh;
  }
  return client;
}

async function renew() {
  if (held.size === 0 || stopping) return;
  const runs = [...held];
  try {
    const { rows } = await (await connection()).query(
      `UPDATE runs SET lease_expires_at = $2 WHERE lease_owner = $1 AND status = 'running'
          AND (run_id, attempt) IN (SELECT * FROM unnest($3::text[], $4::int[])) RETURNING run_id`,
      [owner, Date.now() + leaseMs, runs.map(([runId]) => runId), runs.map(([, attempt]) => attempt)],
    );
    const renewed = new Set(rows.map((row) => row.run_id));
    const lost = runs.filter(([runId, attempt]) => !renewed.has(runId) && held.get(runId) === attempt).map(([runId]) => runId);
    for (const runId of lost) held.delete(runId);
    if (lost.length > 0) parentPort.postMessage({ lost });
  } catch (error) {
    client?.end().catch(() => {});
    client = undefined;
    if (!stopping) parentPort.postMessage({ error: String(error) });
  }
}

const timer = setInterval(renew, Math.max(100, leaseMs / 3));
parentPort.on("message", async (message) => {
  if (message === "stop") {
    stopping = true;
    clearInterval(timer);
    await client?.end().catch(() => {});
    parentPort.close();
  } else if (message.hold) held.set(message.hold.run_id, message.hold.attempt);
  else if (message.drop) held.delete(message.drop);
});
