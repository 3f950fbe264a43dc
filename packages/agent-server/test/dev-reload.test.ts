import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { BERTH_BIN, type BerthProcess, backendEnv, newDataDir, startBerth } from "@berth/test-support";
import { Client } from "@langchain/langgraph-sdk";
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

/** A project folder whose langgraph.json names `src/agent.ts:graph`, that file holding `source`. */
function projectWith(source: string): string {
  const project = newDataDir("berth-dev-broken-");
  mkdirSync(join(project, "src"));
  writeFileSync(join(project, "langgraph.json"), JSON.stringify({ graphs: { agent: "./src/agent.ts:graph" }, env: ".env" }));
  writeFileSync(join(project, ".env"), "GREETING=hello\n");
  writeFileSync(join(project, "src", "agent.ts"), source);
  return project;
}

interface DevChild {
  child: ChildProcess;
  /** Its stderr so far. */
  stderr(): string;
  /** Resolves with stderr once it matches `pattern`; rejects if berth dev exits first. */
  stderrMatching(pattern: RegExp): Promise<string>;
  /** Its exit code. */
  exited: Promise<number | null>;
}

/** `berth dev` (with reload) on `project`, its stdout ignored. */
async function dev(project: string, args: string[]): Promise<DevChild> {
  const dataDir = newDataDir();
  const child = spawn(process.execPath, [BERTH_BIN, "dev", project, "--data-dir", dataDir, ...args], {
    env: { ...process.env, ...(await backendEnv(dataDir)) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, "exit").then(([code]) => code as number | null);
  const stderrMatching = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(stderr)) return;
        child.stderr!.off("data", check);
        resolve(stderr);
      };
      child.stderr!.on("data", check);
      check();
      void exited.then((code) => reject(new Error(`berth dev exited (${code}) before ${pattern}:\n${stderr}`)));
    });
  return { child, stderr: () => stderr, stderrMatching, exited };
}

describe("berth dev on a project broken from the first start", () => {
  const WAITING = /^berth dev: the project does not load \(exit code 1\); waiting for a fix: (http:\/\/\S+) answers 503/m;
  const LOAD_ERROR = /failed to load graph "agent" from src\/agent\.ts \(export "graph"\)/;

  it("stays up answering 503 with the load error, /ok too, and serves once a change fixes it", async () => {
    const project = projectWith("export const graph = (;\n");
    const berth = await dev(project, ["--port", "0"]);
    try {
      const stderr = await berth.stderrMatching(WAITING);
      const url = WAITING.exec(stderr)![1]!;
      assert.equal(countLines(stderr, LOAD_ERROR), 1, `the load error is printed once:\n${stderr}`);
      assert.doesNotMatch(stderr, /berth dev: ready/, "no banner before a server listens");
      for (const [method, path] of [
        ["GET", "/ok"],
        ["POST", "/assistants/search"],
        ["GET", "/docs"],
      ] as const) {
        const response = await fetch(`${url}${path}`, { method, body: method === "POST" ? "{}" : undefined });
        assert.equal(response.status, 503, path);
        const { detail } = (await response.json()) as { detail: string };
        assert.match(detail, LOAD_ERROR, path);
      }
      writeFileSync(join(project, "src", "agent.ts"), graphSource("fixed"));
      const fixed = await berth.stderrMatching(/^berth dev: ready$/m);
      assert.match(fixed, RELOADED);
      assert.match(fixed, new RegExp(`^ {2}API: +${url}$`, "m"), "the port the stand-in held is kept");
      const client = new Client({ apiUrl: url });
      const thread = await client.threads.create();
      const { reply } = (await client.runs.wait(thread.thread_id, "agent", { input: {} })) as { reply: string };
      assert.equal(reply, "fixed hello");
    } finally {
      berth.child.kill("SIGTERM");
      assert.equal(await berth.exited, 0);
      rmSync(project, { recursive: true, force: true });
    }
  });

  it("exits 1 on what no change of the project fixes: a folder without langgraph.json, a port in use", async () => {
    const empty = newDataDir("berth-dev-empty-");
    const noProject = await dev(empty, ["--port", "0"]);
    assert.equal(await noProject.exited, 1);
    assert.match(noProject.stderr(), /berth dev: no langgraph\.json in /);

    const taken = createServer();
    taken.listen(0, "127.0.0.1");
    await once(taken, "listening");
    const port = (taken.address() as { port: number }).port;
    const project = projectWith("export const graph = (;\n");
    try {
      const portInUse = await dev(project, ["--port", String(port)]);
      assert.equal(await portInUse.exited, 1);
      assert.match(portInUse.stderr(), LOAD_ERROR);
      assert.match(
        portInUse.stderr(),
        new RegExp(`berth dev: 127\\.0\\.0\\.1:${port} is already in use; choose another with --port`),
      );
    } finally {
      taken.close();
      rmSync(project, { recursive: true, force: true });
      rmSync(empty, { recursive: true, force: true });
    }
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
