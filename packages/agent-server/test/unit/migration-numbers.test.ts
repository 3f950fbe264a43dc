// One number per change on both backends, and databases numbered the old way renumbered to it.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { renumberings } from "../../src/storage/shared/migration-numbers.js";

const files = (backend: string) =>
  readdirSync(fileURLToPath(new URL(`../../src/storage/${backend}/migrations`, import.meta.url))).filter((name) =>
    name.endsWith(".sql"),
  );

describe("migration numbers", () => {
  it("give the same change the same number on SQLite and PostgreSQL, and no number to two changes", () => {
    const byNumber = new Map<number, string>();
    for (const name of [...files("sqlite"), ...files("postgres")]) {
      const number = Number.parseInt(name, 10);
      const change = name.replace(/^\d+_/, "");
      assert.equal(byNumber.get(number) ?? change, change, `${name}: number ${number} is ${byNumber.get(number)} elsewhere`);
      byNumber.set(number, change);
    }
  });

  it("renumber the records of a PostgreSQL database migrated under the old numbers, highest first", () => {
    const old = ["run_leases", "store", "thread_ttl", "crons", "webhook_outbox", "run_functions", "pending_runs_index"];
    const recorded = [
      { version: 1, name: "001_core.sql" },
      { version: 2, name: "002_runs.sql" },
      ...old.map((change, index) => ({ version: index + 3, name: `00${index + 3}_${change}.sql` })),
    ];
    assert.deepEqual(
      renumberings(recorded, files("postgres")).map(({ from, to }) => [from, to]),
      [
        [9, 10],
        [8, 9],
        [7, 8],
        [6, 7],
        [5, 6],
        [4, 5],
        [3, 4],
      ],
    );
    assert.deepEqual(renumberings(recorded.slice(0, 4), files("postgres")), [
      { from: 4, to: 5, name: "005_store.sql" },
      { from: 3, to: 4, name: "004_run_leases.sql" },
    ]);
  });

  it("leave a database numbered as the files are, and records without a file, alone", () => {
    const current = files("postgres").map((name) => ({ version: Number.parseInt(name, 10), name }));
    assert.deepEqual(renumberings(current, files("postgres")), []);
    assert.deepEqual(renumberings([{ version: 42, name: "042_future.sql" }], files("postgres")), []);
  });
});
