// Worker thread: renews the leases of the runs one worker process holds, on
// its own connection and event loop, so a graph that blocks the main thread
// cannot let its run's lease lapse (and have it executed twice).
import { parentPort, workerData } from "node:worker_threads";
import pg from "pg";

const { databaseUrl, owner, leaseMs } = workerData;
const client = new pg.Client({ connectionString: databaseUrl });
await client.connect();

async function renew() {
  try {
    await client.query("UPDATE runs SET lease_expires_at = $2 WHERE lease_owner = $1 AND status = 'running'", [
      owner,
      Date.now() + leaseMs,
    ]);
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
}

const timer = setInterval(renew, Math.max(100, leaseMs / 3));
parentPort.on("message", async (message) => {
  if (message === "stop") {
    clearInterval(timer);
    await client.end();
    parentPort.close();
  }
});
