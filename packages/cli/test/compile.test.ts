// `berth compile`: a project's TypeScript made JavaScript ahead of time, which `berth serve` and `berth check` then load
// instead of the sources, for as long as the sources are what was compiled.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { type BerthProcess, runBerth, startBerth } from "@berth/test-support";

const scratch = mkdtempSync(join(tmpdir(), "berth-compile-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

let projects = 0;
/** A project folder holding `files` (path → content), its LangChain imports resolving to Berth's pinned copies. */
function project(files: Record<string, string>): string {
  projects += 1;
  const folder = join(scratch, `project-${projects}`);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), content);
  }
  return folder;
}

/** Two graphs sharing a module (through a tsconfig `paths` alias) that counts the runs of the first. */
const TWO_GRAPHS = {
  "langgraph.json": JSON.stringify({ graphs: { counter: "./src/count.ts:graph", reader: "./src/read.mts:graph" } }),
  "package.json": JSON.stringify({ type: "module" }),
  "tsconfig.json": JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { "@lib/*": ["./src/lib/*"] } } }),
  "src/lib/shared.ts": `export const seen: { count: number } = { count: 0 };\nexport const GREETING: string = "from source";\n`,
  "src/state.ts": `import { Annotation } from "@langchain/langgraph";
export const State = Annotation.Root({ count: Annotation<number>(), greeting: Annotation<string>() });
`,
  "src/count.ts": `import { StateGraph } from "@langchain/langgraph";
import { GREETING, seen } from "@lib/shared";
import { State } from "./state";

export const graph = new StateGraph(State)
  .addNode("increment", () => ({ count: ++seen.count, greeting: GREETING }))
  .addEdge("__start__", "increment")
  .compile();
`,
  "src/read.mts": `import { StateGraph } from "@langchain/langgraph";
import { seen } from "@lib/shared";
import { State } from "./state.js";

export const graph = new StateGraph(State)
  .addNode("read", () => ({ count: seen.count }))
  .addEdge("__start__", "read")
  .compile();
`,
};

async function serve(folder: string): Promise<BerthProcess> {
  // In the project's folder, as a deployment's server runs: tsx reads tsconfig.json (its `paths`) from there.
  return startBerth({ project: folder, role: "all", cwd: folder });
}

async function values(server: BerthProcess, graph: string): Promise<Record<string, unknown>> {
  return (await server.client.runs.wait(null, graph, { input: {} })) as Record<string, unknown>;
}

describe("berth compile", () => {
  test("compiles every graph once; berth serve runs the JavaScript, one instance of a module both import", async () => {
    const folder = project(TWO_GRAPHS);
    const compiled = await runBerth(["compile", folder]);
    assert.equal(compiled.code, 0, compiled.stderr);
    assert.match(compiled.stdout, /^2 modules compiled in \d+\.\d\d s: src\/count\.ts, src\/read\.mts\n$/);
    const manifest = JSON.parse(readFileSync(join(folder, ".berth", "compiled", "manifest.json"), "utf8")) as {
      modules: Record<string, string>;
    };
    assert.deepEqual(Object.keys(manifest.modules).sort(), ["src/count.ts", "src/read.mts"]);

    const server = await serve(folder);
    try {
      assert.deepEqual(await values(server, "counter"), { count: 1, greeting: "from source" });
      assert.deepEqual(await values(server, "counter"), { count: 2, greeting: "from source" });
      assert.equal((await values(server, "reader")).count, 2, "the graphs share one instance of src/lib/shared.ts");
    } finally {
      await server.stop();
    }
  });

  test("berth serve imports the compiled JavaScript while the sources are unchanged, the sources once edited", async () => {
    const folder = project(TWO_GRAPHS);
    assert.equal((await runBerth(["compile", folder])).code, 0);
    // Mark the compiled JavaScript: the mark shows when it is what runs.
    const compiledDir = join(folder, ".berth", "compiled");
    const holder = readdirSync(compiledDir, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".mjs"))
      .find((file) => readFileSync(join(compiledDir, file), "utf8").includes('"from source"'));
    assert.ok(holder, "a compiled file holds the greeting");
    const holderFile = join(compiledDir, holder);
    writeFileSync(holderFile, readFileSync(holderFile, "utf8").replace('"from source"', '"from compiled"'));

    let server = await serve(folder);
    try {
      assert.equal((await values(server, "counter")).greeting, "from compiled");
    } finally {
      await server.stop();
    }
    writeFileSync(join(folder, "src/lib/shared.ts"), TWO_GRAPHS["src/lib/shared.ts"].replace("from source", "edited"));
    server = await serve(folder);
    try {
      assert.equal((await values(server, "counter")).greeting, "edited", "an edited source is loaded, not its stale compilation");
    } finally {
      await server.stop();
    }
  });

  test("a graph failing at import is reported at its TypeScript source's line", async () => {
    const folder = project({
      "langgraph.json": JSON.stringify({ graphs: { broken: "./src/broken.ts:graph" } }),
      "package.json": JSON.stringify({ type: "module" }),
      "src/broken.ts": `type Setting = string | undefined;\n\nconst setting: Setting = undefined;\nif (!setting) throw new Error("MY_SETTING is not set");\nexport const graph = setting;\n`,
    });
    assert.equal((await runBerth(["compile", folder])).code, 0);
    const checked = await runBerth(["check", folder]);
    assert.equal(checked.code, 1);
    assert.match(checked.stderr, /MY_SETTING is not set/);
    assert.match(checked.stderr, /src\/broken\.ts:4:/);
    assert.doesNotMatch(checked.stderr, /\.berth/);
  });

  test("a project whose module reads its own location keeps its sources, and still serves", async () => {
    const folder = project({
      "langgraph.json": JSON.stringify({ graphs: { located: "./src/located.ts:graph" } }),
      "package.json": JSON.stringify({ type: "module" }),
      "src/located.ts": `import { Annotation, StateGraph } from "@langchain/langgraph";
import { fileURLToPath } from "node:url";
const here: string = fileURLToPath(import.meta.url);
const State = Annotation.Root({ file: Annotation<string>() });
export const graph = new StateGraph(State).addNode("where", () => ({ file: here })).addEdge("__start__", "where").compile();
`,
    });
    const compiled = await runBerth(["compile", folder]);
    assert.equal(compiled.code, 0);
    assert.match(
      compiled.stderr,
      /^berth compile: warning: sources kept, loaded through tsx: src\/located\.ts uses import\.meta\n$/,
    );
    assert.equal(existsSync(join(folder, ".berth", "compiled")), false);
    const server = await serve(folder);
    try {
      assert.equal((await values(server, "located")).file, join(folder, "src", "located.ts"));
    } finally {
      await server.stop();
    }
  });

  test("an invalid project is refused with the reason, exit 1", async () => {
    const folder = project({ "langgraph.json": "{ not json" });
    const compiled = await runBerth(["compile", folder]);
    assert.equal(compiled.code, 1);
    assert.match(compiled.stderr, /^berth compile: .*langgraph\.json is not valid JSON/);
  });
});
