import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { BERTH_BIN, type BerthProcess, newDataDir, startBerth } from "@berth/test-support";
import { countLines, outputWhere } from "./helpers/tracing.js";

/** A reload on a loaded machine: the old server's shutdown and a new process loading the graph. */
const RELOAD_MS = 60_000;
const RELOADED = /berth dev: reloaded in \d+ ms/;

/** A graph answering `<version> <GREETING>`, GREETING read when the run runs. */
const graphSource = (version: string) => `import { Annotation, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({ reply: Annotation<string> });

export const graph = new StateGraph(State)
  .addNode("answer", () => ({ reply: \`${version} \${process.env.GREETING}\` }))
  .addEdge("__start__", "answer")
  .addEdge("answer", "__end__")
  .compile();
`;

describe("berth dev reloads the project when it changes", () => {
  let project: string;
  let berth: BerthProcess;
  let threadId: string;
  const reply = async () => ((await berth.client.runs.wait(threadId, "agent", { input: {} })) as { reply: string }).reply;
  /** Resolves once `count` reloads have finished (a line each). */
  const reloads = (count: number) => outputWhere(berth, (output) => countLines(output, RELOADED) >= count, RELOAD_MS);

  before(async () => {
    project = newDataDir("berth-dev-reload-");
    mkdirSync(join(project, "src"));
    writeFileSync(join(project, "langgraph.json"), JSON.stringify({ graphs: { agent: "./src/agent.ts:graph" }, env: ".env" }));
    writeFileSync(join(project, "src", "agent.ts"), graphSource("v1"));
    writeFileSync(join(project, ".env"), "GREETING=hello\n");
    berth = await startBerth({ reload: true, project });
    threadId = (await berth.client.threads.create()).thread_id;
  });
  after(async () => {
    await berth?.stop();
    rmSync(project, { recursive: true, force: true });
  });

  it("a changed graph source is served by a new server, on the same port, with the same threads", async () => {
    assert.equal(await reply(), "v1 hello");
    writeFileSync(join(project, "src", "agent.ts"), graphSource("v2"));
    const output = await reloads(1);
    assert.match(output, /berth dev: src\/agent\.ts changed; reloading/);
    assert.equal((await berth.client.threads.get(threadId)).thread_id, threadId);
    assert.equal((await berth.client.runs.list(threadId)).length, 1, "the run made before the reload");
    assert.equal(await reply(), "v2 hello");
  });

  it("a changed .env reaches the graph", async () => {
    writeFileSync(join(project, ".env"), "GREETING=bonjour\n");
    const output = await reloads(2);
    assert.match(output, /berth dev: \.env changed; reloading/);
    assert.equal(await reply(), "v2 bonjour");
  });

  it("a graph that does not load keeps berth dev waiting, answering 503 with why, and the next good edit reloads", async () => {
    writeFileSync(join(project, "src", "agent.ts"), "export const graph = (;\n");
    await outputWhere(berth, (output) => /berth dev: the server did not start \(exit code \d+\)/.test(output), RELOAD_MS);
    assert.ok(berth.alive(), "the supervisor waits for the next change");
    // Its port answers meanwhile, every path, with the load error as the API's errors are written.
    for (const path of ["/ok", "/assistants/search"]) {
      const response = await fetch(`${berth.url}${path}`, {
        method: path === "/ok" ? "GET" : "POST",
        body: path === "/ok" ? undefined : "{}",
      });
      assert.equal(response.status, 503, path);
      const { detail } = (await response.json()) as { detail: string };
      assert.match(detail, /failed to load graph "agent" from src\/agent\.ts \(export "graph"\)/);
    }
    writeFileSync(join(project, "src", "agent.ts"), graphSource("v3"));
    await reloads(3);
    assert.equal(await reply(), "v3 bonjour");
    assert.equal((await berth.client.runs.list(threadId)).length, 4, "every run of the thread survived the reloads");
  });
});

describe("berth dev and serve --help", () => {
  const help = async (command: string) => {
    const child = spawn(process.execPath, [BERTH_BIN, command, "--help"], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const [code] = (await once(child, "exit")) as [number | null];
    return { code, stdout };
  };

  it("print their usage and exit 0", async () => {
    const dev = await help("dev");
    assert.equal(dev.code, 0);
    assert.match(dev.stdout, /^Usage: berth dev /);
    assert.match(dev.stdout, /--no-reload/);
    const serve = await help("serve");
    assert.equal(serve.code, 0);
    assert.match(serve.stdout, /^Usage: berth serve /);
    assert.match(serve.stdout, /--role api\|worker\|all/);
  });
});
