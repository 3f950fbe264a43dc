// Worker thread: checkpoints the WAL of the database file (copies committed
// pages into the main file, and syncs it) on its own connection, so the main
// thread's commits only append to the WAL and never wait on that copy or its
// fsync. PASSIVE never blocks writers; what it cannot copy yet, the next one does.
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";

const { file, intervalMs } = workerData;
const db = new Database(file);
db.pragma("busy_timeout = 1000");

const timer = setInterval(() => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch {
    // Busy (another process's checkpoint, a migration): the next tick tries again.
  }
}, intervalMs);

parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
