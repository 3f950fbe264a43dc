// Worker thread: renews the leases of the runs one worker process executes in
// a SQLite file other processes share (BERTH_SQLITE_SHARED), on its own
// connection and event loop, so a graph that blocks the main thread cannot let
// its run's lease lapse (and have another process execute it again). Runs
// whose lease another attempt took are reported back, so their execution stops.
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";

const { file, owner, leaseMs } = workerData;
/** run_id -> attempt of the runs to renew. */
const held = new Map();
const db = new Database(file);
db.pragma("busy_timeout = 5000");
db.pragma("synchronous = NORMAL"); // a renewal lost to a power cut matters no more than the process it renewed for
const renewal = db.prepare(
  `UPDATE runs SET lease_expires_at = ? WHERE lease_owner = ? AND status = 'running'
      AND (run_id, attempt) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?)) RETURNING run_id`,
);

function renew() {
  if (held.size === 0) return;
  const runs = [...held];
  try {
    const renewed = new Set(renewal.all(Date.now() + leaseMs, owner, JSON.stringify(runs)).map((row) => row.run_id));
    const lost = runs.filter(([runId, attempt]) => !renewed.has(runId) && held.get(runId) === attempt).map(([runId]) => runId);
    for (const runId of lost) held.delete(runId);
    if (lost.length > 0) parentPort.postMessage({ lost });
  } catch (error) {
    // Usually the database stayed locked past busy_timeout: the next renewal, a third of a lease later, tries again.
    parentPort.postMessage({ error: String(error) });
  }
}

const timer = setInterval(renew, Math.max(100, leaseMs / 3));
parentPort.on("message", (message) => {
  if (message === "stop") {
    clearInterval(timer);
    db.close();
    parentPort.close();
  } else if (message.hold) held.set(message.hold.run_id, message.hold.attempt);
  else if (message.drop) held.delete(message.drop);
});
