import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { GraphLoadError, startServer } from "@berth/agent-server";
import { Client } from "@langchain/langgraph-sdk";
import { FIXTURES } from "@berth/test-support";
import { pino } from "pino";

// In a file of its own: the server runs in the test's process, and the module hooks it installs there (LangChain
// packages pinned to Berth's copies) must not reach other files' checks of what a project resolves.
const JSON_HEADERS = { "content-type": "application/json" };

describe("a project whose graph fails to load, under berth dev", () => {
  // Embedded SQLite in a data directory of its own, whichever backend the suite runs: the server reads these at start.
  delete process.env.DATABASE_URL;
  delete process.env.REDIS_URL;

  it("listens first: /ok and the assistants answer, a request needing the graph gets 503 with why", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "berth-deferred-graphs-"));
    const server = await startServer({
      config: join(FIXTURES, "broken-module"),
      host: "127.0.0.1",
      port: 0,
      dataDir,
      dev: true,
      logger: pino({ level: "silent" }),
    });
    try {
      assert.equal((await fetch(`${server.url}/ok`)).status, 200);
      const search = await fetch(`${server.url}/assistants/search`, { method: "POST", body: "{}", headers: JSON_HEADERS });
      const [assistant] = (await search.json()) as { assistant_id: string; graph_id: string }[];
      assert.equal(assistant?.graph_id, "explodes");
      const schemas = await fetch(`${server.url}/assistants/${assistant.assistant_id}/schemas`);
      assert.equal(schemas.status, 503);
      const { detail } = (await schemas.json()) as { detail: string };
      assert.match(detail, /failed to load graph "explodes" from graph\.mjs \(export "graph"\): this module fails on purpose/);
      // What the CLI reports: berth dev still exits 1 on it.
      await assert.rejects(server.graphsLoaded, (error) => error instanceof GraphLoadError && error.message === detail);
    } finally {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("a project under berth dev, while its graphs and run worker load after it listens", () => {
  delete process.env.DATABASE_URL;
  delete process.env.REDIS_URL;
  const start = (dataDir: string, executionThread: "on" | "off" = "off") =>
    startServer({
      config: join(FIXTURES, "graphs"),
      host: "127.0.0.1",
      port: 0,
      dataDir,
      dev: true,
      settings: { executionThread },
      logger: pino({ level: "silent" }),
    });

  for (const executionThread of ["off", "on"] as const) {
    it(`runs what it was asked before they loaded (execution thread ${executionThread}): a thread's run and a stateless wait answer`, async () => {
      await runsAskedEarly(executionThread);
    });
  }

  async function runsAskedEarly(executionThread: "on" | "off"): Promise<void> {
    const dataDir = mkdtempSync(join(tmpdir(), "berth-deferred-worker-"));
    const server = await start(dataDir, executionThread);
    try {
      const client = new Client({ apiUrl: server.url });
      const input = { messages: [{ role: "user", content: "early" }] };
      const thread = await client.threads.create();
      const outputs = await Promise.all([
        client.runs.wait(thread.thread_id, "agent", { input }),
        client.runs.wait(null, "agent", { input }),
      ]);
      for (const output of outputs) {
        const { messages } = output as { messages: { content: string }[] };
        assert.match(messages.at(-1)?.content ?? "", /: early$/);
      }
      await server.graphsLoaded;
    } finally {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  it("closes at once when told to before they loaded, reporting no failure to load", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "berth-deferred-close-"));
    try {
      const server = await start(dataDir);
      await server.close();
      await server.graphsLoaded;
      // The next start on the same data directory serves runs: nothing was left half started.
      const next = await start(dataDir);
      try {
        const input = { messages: [{ role: "user", content: "again" }] };
        const { messages } = (await new Client({ apiUrl: next.url }).runs.wait(null, "agent", { input })) as {
          messages: { content: string }[];
        };
        assert.match(messages.at(-1)?.content ?? "", /: again$/);
      } finally {
        await next.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
