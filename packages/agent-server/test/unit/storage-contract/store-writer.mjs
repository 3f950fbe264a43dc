// A second writer for the store's concurrency test on SQLite: its own thread
// and connection put one item over and over, while the test's thread does
// too, as two processes sharing the file would (one thread's calls run one
// after another: they would never meet). workerData: { dataDir, writer, puts, dimensions }.
import { parentPort, workerData } from "node:worker_threads";
import { tsImport } from "tsx/esm/api";

const { createSqliteStorage } = await tsImport("../../../src/storage/sqlite/index.ts", import.meta.url);
const { dataDir, writer, puts, dimensions } = workerData;
const storage = createSqliteStorage(dataDir, "normal");
try {
  const vector = Array.from({ length: dimensions }, (_, d) => (d === writer ? 1 : 0));
  for (let i = 0; i < puts; i++) {
    await storage.store.put({
      namespace: ["race"],
      key: "one",
      value: { writer, i },
      ttlMinutes: null,
      vectors: [
        { field: "a", vector },
        { field: "b", vector },
      ],
    });
  }
  parentPort.postMessage({ ok: true });
} catch (error) {
  parentPort.postMessage({ ok: false, error: String(error) });
} finally {
  await storage.close();
}
