import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { dirname, join, sep } from "node:path";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, FIXTURES, runBerthExpectingFailure, startBerth } from "@berth/test-support";
import { outputWhere } from "./helpers/tracing.js";

describe("loading a project's langgraph.json", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth();
  });
  after(() => berth.stop());

  it("loads compiled, uncompiled, promised, default-export, factory and plain JS graphs", async () => {
    const nodesOf = async (graphId: string) =>
      (await berth.client.assistants.getGraph(graphId)).nodes.map((node) => node.id).filter((id) => !String(id).startsWith("__"));
    assert.deepEqual(await nodesOf("agent"), ["respond"]);
    assert.deepEqual(await nodesOf("uncompiled"), ["increment"]);
    assert.deepEqual(await nodesOf("promised"), ["increment"]);
    assert.deepEqual(await nodesOf("default_export"), ["from_default_export"]);
    assert.deepEqual(await nodesOf("factory"), ["default_node"]);
    assert.deepEqual(await nodesOf("plain_js"), ["shout"]);
  });

  it("warns about unknown keys without failing", () => {
    assert.match(berth.output(), /unknown key \\?"unknown_setting\\?" is ignored/);
  });
});

describe("a TypeScript project in a CommonJS scope", () => {
  it("keeps its graph's named export and its extensionless imports, and its nodes reach the store", async () => {
    const berth = await startBerth({ project: "commonjs-ts" });
    try {
      assert.deepEqual(await berth.client.runs.wait(null, "commonjs", { input: { text: "cjs" } }), { text: "CJS!" });
      const words = ["one", "two", "three"];
      const thread = await berth.client.threads.create();
      assert.deepEqual(await berth.client.runs.wait(thread.thread_id, "commonjs_memo", { input: { words } }), {
        words,
        read: words,
      });
      assert.deepEqual((await berth.client.store.getItem(["memo", thread.thread_id], "w2"))?.value, { word: "three" });
    } finally {
      await berth.stop();
    }
  });
});

describe("a project described by the official images' variables", () => {
  it("a folder without langgraph.json is served from LANGSERVE_GRAPHS, as the official CLI's images carry it", async () => {
    const project = mkdtempSync(join(tmpdir(), "berth-image-env-"));
    cpSync(join(FIXTURES, "graphs"), project, { recursive: true });
    rmSync(join(project, "langgraph.json"));
    const berth = await startBerth({
      project,
      env: {
        LANGSERVE_GRAPHS: JSON.stringify({ shouter: "./plain.mjs:graph" }),
        LANGGRAPH_STORE: "{}",
        LANGGRAPH_WEBHOOKS: JSON.stringify({ url: { require_https: true } }),
      },
    });
    try {
      assert.deepEqual(await berth.client.runs.wait(null, "shouter", { input: { text: "image" } }), { text: "IMAGE" });
      const plainWebhook = await fetch(`${berth.url}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "shouter", input: { text: "x" }, webhook: "http://hooks.example.com/done" }),
      });
      assert.equal(plainWebhook.status, 422, "LANGGRAPH_WEBHOOKS' url policy applies");
      assert.deepEqual(
        (await berth.client.assistants.search({ metadata: { created_by: "system" } })).map((assistant) => assistant.graph_id),
        ["shouter"],
      );
    } finally {
      await berth.stop();
      rmSync(project, { recursive: true, force: true });
    }
  });

  it("a variable that is not JSON stops the start, naming it", async () => {
    const project = mkdtempSync(join(tmpdir(), "berth-image-env-"));
    try {
      const { code, output } = await runBerthExpectingFailure({ project, env: { LANGSERVE_GRAPHS: "{not json" } });
      assert.equal(code, 1);
      assert.match(output, /LANGSERVE_GRAPHS is not valid JSON/);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});

describe("langgraph.json keys Berth does not apply", () => {
  it("starts, and names each key it does not apply in a warning", async () => {
    const berth = await startBerth({ project: "declares-auth" });
    try {
      const output = berth.output();
      // JSON log lines: the key's quotes are escaped.
      assert.match(output, /\\"node_version\\" is ignored \(/);
      assert.doesNotMatch(output, /\\"http(\.cors)?\\" is ignored/, "the http section is applied");
      assert.doesNotMatch(output, /\\"store\\" is ignored/, "the store section is applied");
      assert.doesNotMatch(output, /\\"auth\\" is ignored/, "the auth section is applied");
      assert.deepEqual(await berth.client.runs.wait(null, "shout", { input: { text: "open" } }), { text: "OPEN" });
    } finally {
      await berth.stop();
    }
  });
});

describe("a project that fails to load", () => {
  it("names the file and the missing export, and exits non-zero", async () => {
    const { code, output } = await runBerthExpectingFailure({ project: "broken-export" });
    assert.equal(code, 1);
    assert.match(output, /failed to load graph "missing"/);
    assert.match(output, /from graph\.mjs \(/, "relative to the project's folder");
    assert.match(output, /export "doesNotExist"/);
  });

  it("reports an error thrown while the module loads, with the file and line of the throw", async () => {
    const { code, output } = await runBerthExpectingFailure({ project: "broken-module" });
    assert.equal(code, 1);
    assert.match(
      output,
      /failed to load graph "explodes" from graph\.mjs \(export "graph"\): this module fails on purpose \(at graph\.mjs:\d+:\d+\)/,
    );
    assert.ok(!output.includes(FIXTURES), "paths relative to the project's folder");
  });

  it("reports a missing langgraph.json", async () => {
    const { code, output } = await runBerthExpectingFailure({ project: join(FIXTURES, "does-not-exist") });
    assert.equal(code, 1);
    assert.match(output, /does-not-exist does not exist/);
  });
});

describe("a project with its own copies of LangGraph and LangChain core", () => {
  const projectDir = join(FIXTURES, "own-deps");
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: projectDir });
  });
  after(() => berth.stop());

  it("really has different versions installed", () => {
    const ownRequire = createRequire(join(projectDir, "package.json"));
    const berthRequire = createRequire(import.meta.url);
    for (const name of ["@langchain/langgraph", "@langchain/core", "@langchain/langgraph-checkpoint"]) {
      const own = JSON.parse(readFileSync(ownRequire.resolve(`${name}/package.json`), "utf8")).version;
      const berths = JSON.parse(readFileSync(berthRequire.resolve(`${name}/package.json`), "utf8")).version;
      assert.notEqual(own, berths, `${name}: the fixture must bring another version`);
    }
  });

  it("serves the graph: drawing, schemas and state updates through its reducers", async () => {
    const drawing = await berth.client.assistants.getGraph("own");
    assert.deepEqual(
      drawing.nodes.map((node) => node.id),
      ["__start__", "confirm", "reply", "__end__"],
    );
    const thread = await berth.client.threads.create({
      graphId: "own",
      supersteps: [
        { updates: [{ values: { messages: [{ type: "human", content: "one", id: "1" }] }, asNode: "reply" }] },
        { updates: [{ values: { messages: [{ type: "ai", content: "two", id: "2" }] }, asNode: "reply" }] },
      ],
    });
    const messages = (thread.values as { messages: { type: string; content: string }[] }).messages;
    assert.deepEqual(
      messages.map((m) => [m.type, m.content]),
      [
        ["human", "one"],
        ["ai", "two"],
      ],
    );
  });

  it("shares Berth's copy of zod when its own is the same version, and keeps its own otherwise", async () => {
    const packageDir = (require: NodeJS.Require) => dirname(require.resolve("zod/package.json"));
    const versionIn = (dir: string) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version as string;
    const own = packageDir(createRequire(join(projectDir, "package.json")));
    const berths = packageDir(createRequire(import.meta.url));
    assert.notEqual(own, berths, "the fixture installs a copy of its own");
    const { zod } = (await berth.client.runs.wait(null, "schema_library", { input: {} })) as { zod: string };
    const expected = versionIn(own) === versionIn(berths) ? berths : own;
    assert.ok(zod.startsWith(`${expected}${sep}`), `zod loaded from ${zod}, expected under ${expected}`);
  });
});

describe("a project that logs with the SDK's getLogger()", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "sdk-logger" });
  });
  after(() => berth.stop());

  it("starts, and its lines reach Berth's JSON log: at import, and inside a run with the run's ids", async () => {
    const entries = () =>
      berth
        .output()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    // berth dev imports the graphs right after it listens.
    await outputWhere(berth, (output) => output.includes('"msg":"graph module loaded"'));
    assert.ok(entries().some((entry) => entry.msg === "graph module loaded" && entry.phase === "import" && entry.level === 30));
    const thread = await berth.client.threads.create();
    const run = await berth.client.runs.create(thread.thread_id, "logs", { input: { text: "hi" } });
    assert.deepEqual(await berth.client.runs.join(thread.thread_id, run.run_id), { text: "logged: hi" });
    // Log lines are written asynchronously: they may reach the pipe after the run's answer.
    await outputWhere(berth, (output) => output.includes('"msg":"node ran"'));
    const line = entries().find((entry) => entry.msg === "node ran")!;
    assert.equal(line.level, 40);
    assert.equal(line.text, "hi");
    assert.equal(line.run_id, run.run_id);
    assert.equal(line.thread_id, thread.thread_id);
    assert.equal(line.langgraph_node, "speak");
  });
});
