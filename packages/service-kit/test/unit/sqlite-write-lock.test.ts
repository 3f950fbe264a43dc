import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { guardWrites, SqliteWriteLock } from "../../src/sqlite-write-lock.js";
import { WRITES, writeRows } from "./sqlite-write-lock-writer.js";

/**
 * The same writes from a worker thread (with the lock's memory when given), started together with the caller's: the
 * thread loads, says it is ready, and writes once `go()` is called.
 */
async function threadWriter(file: string, buffer: SharedArrayBuffer | undefined) {
  const start = new SharedArrayBuffer(4);
  const writer = JSON.stringify(new URL("./sqlite-write-lock-writer.ts", import.meta.url).href);
  const code = `
    const { workerData, parentPort } = require("node:worker_threads");
    import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))})
      .then((tsx) => { tsx.register(); return import(${writer}); })
      .then((module) => parentPort.postMessage(module.writeRowsForThread(workerData, () => parentPort.postMessage("ready"))));
  `;
  const worker = new Worker(code, { eval: true, workerData: { file, buffer, start } });
  let ready: () => void = () => {};
  const loaded = new Promise<void>((resolve) => (ready = resolve));
  const done = new Promise<number>((resolve, reject) => {
    worker.on("message", (message) => (message === "ready" ? ready() : resolve(message as number)));
    worker.once("error", reject);
  });
  await Promise.race([loaded, done]);
  const go = () => {
    Atomics.store(new Int32Array(start), 0, 1);
    Atomics.notify(new Int32Array(start), 0);
  };
  return { go, done };
}

function newDatabase(): string {
  const file = join(mkdtempSync(join(tmpdir(), "berth-write-lock-")), "db.sqlite");
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE rows (writer TEXT, n INTEGER); CREATE TABLE totals (n INTEGER); INSERT INTO totals VALUES (0);");
  db.close();
  return file;
}

describe("SqliteWriteLock: the threads of a process writing one SQLite file", () => {
  test("with the lock shared, no write of either thread meets the other's transaction", async () => {
    const file = newDatabase();
    const lock = new SqliteWriteLock();
    const thread = await threadWriter(file, lock.buffer);
    thread.go();
    const mainBusy = writeRows(file, lock, "main", WRITES);
    const threadBusy = await thread.done;
    assert.deepEqual({ threadBusy, mainBusy }, { threadBusy: 0, mainBusy: 0 });
    const db = new Database(file, { readonly: true });
    const counts = db.prepare("SELECT writer, count(*) AS rows FROM rows GROUP BY writer ORDER BY writer").all();
    assert.deepEqual(counts, [
      { writer: "main", rows: WRITES },
      { writer: "thread", rows: WRITES },
    ]);
    assert.equal((db.prepare("SELECT n FROM totals").get() as { n: number }).n, 2 * (WRITES - WRITES / 10));
    db.close();
  });

  test("a nested transaction and a write inside a transaction reuse the lock held", () => {
    const file = newDatabase();
    const db = new Database(file);
    guardWrites(db, new SqliteWriteLock());
    const inner = db.transaction(() => db.prepare("INSERT INTO rows VALUES ('nested', 1)").run());
    db.transaction(() => {
      inner();
      db.prepare("INSERT INTO rows VALUES ('outer', 2)").run();
    }).immediate();
    assert.equal((db.prepare("SELECT count(*) AS n FROM rows").get() as { n: number }).n, 2);
    db.close();
  });
});
