// Worker thread: renews the leases of the runs one worker process holds in a
// SQLite file other processes share (BERTH_SQLITE_SHARED), on its own
// connection and event loop, so a graph that blocks the main thread cannot let
// its run's lease lapse (and have another process execute it again).
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";

const { file, owner, leaseMs } = workerData;
const db = new Database(file);
db.pragma("busy_timeout = 5000");
db.pragma("synchronous = NORMAL"); // a renewal lost to a power cut matters no more than the process it renewed for
const renew = db.prepare("UPDATE runs SET lease_expires_at = ? WHERE lease_owner = ? AND status = 'running'");

const timer = setInterval(() => {
  try {
    renew.run(Date.now() + leaseMs, owner);
  } catch {
    // The database stayed locked past busy_timeout: the next renewal, a third of a lease later, tries again.
  }
}, Math.max(100, leaseMs / 3));

parentPort.on("message", (message) => {
  if (message === "stop") {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
