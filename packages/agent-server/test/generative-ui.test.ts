import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { Client } from "@langchain/langgraph-sdk";
import { BERTH_BIN, type BerthProcess, FIXTURES, request, runBerthExpectingFailure, startBerth } from "@berth/test-support";
import { build } from "esbuild";
import { launchChromium } from "@berth/test-support/browser";
import type { Browser } from "playwright-core";

const API_KEY = "generative-ui-key";
const KEY = { "x-api-key": API_KEY };
const PROJECT = "generative-ui/project";
const run = promisify(execFile);

type UiMessage = { type: "ui"; id: string; name: string; props: Record<string, unknown>; metadata?: Record<string, unknown> };

/** The page's script: React, the SDK's useStream and LoadExternalComponent, from node_modules, in one file. */
async function harnessScript(): Promise<string> {
  const result = await build({
    entryPoints: [join(FIXTURES, "generative-ui", "page", "harness.tsx")],
    bundle: true,
    write: false,
    platform: "browser",
    format: "iife",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "silent",
    outfile: "harness.js",
  });
  return result.outputFiles[0]!.text;
}

describe("generative UI: `ui` bundles, the /ui routes and UI messages", () => {
  let berth: BerthProcess;
  let client: Client;
  before(async () => {
    berth = await startBerth({ project: PROJECT, env: { BERTH_API_KEY: API_KEY } });
    client = new Client({ apiUrl: berth.url, apiKey: API_KEY });
  });
  after(() => berth.stop());

  it("bundles at start into the data dir's cache, without warning that `ui` is ignored", () => {
    assert.doesNotMatch(berth.output(), /"ui(_config)?" is ignored/);
    for (const file of ["agent/entrypoint.js", "agent/entrypoint.css", "gallery-2/entrypoint.js"]) {
      assert.ok(existsSync(join(berth.dataDir, "ui-cache", file)), `${file} is in the cache`);
    }
  });

  it("POST /ui/{name}: the reference's HTML fragment, stylesheet then script", async () => {
    const response = await fetch(`${berth.url}/ui/agent`, {
      method: "POST",
      headers: { ...KEY, "content-type": "application/json", accept: "text/html" },
      body: JSON.stringify({ name: "card", props: { title: "x" } }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/html/);
    const host = new URL(berth.url).host;
    assert.equal(
      await response.text(),
      `<link rel="stylesheet" href="http://${host}/ui/agent/entrypoint.css" />\n` +
        `<script src="http://${host}/ui/agent/entrypoint.js" onload='__LGUI_agent.render("card", "{{shadowRootId}}")'></script>`,
    );
  });

  it("POST /ui/{assistant_id}: an assistant finds its graph's bundle; names become globals as in the reference", async () => {
    const assistant = await client.assistants.create({ graphId: "agent" });
    const byAssistant = await fetch(`${berth.url}/ui/${assistant.assistant_id}`, {
      method: "POST",
      headers: { ...KEY, "content-type": "application/json" },
      body: JSON.stringify({ name: "card" }),
    });
    assert.equal(byAssistant.status, 200);
    assert.match(await byAssistant.text(), /\/ui\/agent\/entrypoint\.js" onload='__LGUI_agent\.render\("card"/);
    const gallery = await fetch(`${berth.url}/ui/gallery-2`, {
      method: "POST",
      headers: { ...KEY, "content-type": "application/json" },
      body: JSON.stringify({ name: "tile" }),
    });
    assert.match(
      await gallery.text(),
      /^<script src="[^"]+\/ui\/gallery-2\/entrypoint\.js" onload='__LGUI_gallery_2\.render\("tile"/,
    );
  });

  it("unknown names and files are 404 JSON; POST needs the key, the assets do not", async () => {
    const unknown = await request(berth.url, "POST", "/ui/nobody", { name: "card" }, KEY);
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { detail: 'UI not found for agent "nobody"' });
    const missingFile = await request(berth.url, "GET", "/ui/agent/other.js");
    assert.equal(missingFile.status, 404);
    assert.equal(typeof (missingFile.body as { detail: string }).detail, "string");
    assert.equal((await request(berth.url, "POST", "/ui/agent", { name: "card" })).status, 401);

    const script = await fetch(`${berth.url}/ui/agent/entrypoint.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get("content-type") ?? "", /^text\/javascript/);
    assert.match(await script.text(), /var __LGUI_agent = /);
    const style = await fetch(`${berth.url}/ui/agent/entrypoint.css`);
    assert.match(style.headers.get("content-type") ?? "", /^text\/css/);
    assert.match(await style.text(), /\.card/);
  });

  it('the bundle takes React and the SDK from the page\'s registry, `globalThis[Symbol.for("LGUI_REQUIRE")]`', async () => {
    // What the SDK's `LoadExternalComponent` inserts, and the script it names, as the reference's suite reads them.
    const fragment = await client["~ui"].getComponent("agent", "card");
    const src = /<script src="(?<src>[^"]+)"/.exec(fragment)?.groups?.src;
    assert.ok(src, fragment);
    const script = await (await fetch(src)).text();
    assert.ok(script.includes('globalThis[Symbol.for("LGUI_REQUIRE")]'), "the bundle reads the page's registry");
    for (const shared of ["react", "react/jsx-runtime", "@langchain/langgraph-sdk/react-ui", "fixture-shared-label"]) {
      assert.ok(script.includes(`(${JSON.stringify(shared)})`), `${shared} comes from the page`);
    }
    // No copy of React of its own: its hooks would then throw "Invalid hook call" in the page.
    assert.doesNotMatch(script, /useState=|function useState\(|react\.production/);
  });

  it("/openapi.json lists both routes", async () => {
    const document = (await request(berth.url, "GET", "/openapi.json")).body as { paths: Record<string, object> };
    assert.ok(document.paths["/ui/{assistant_id}"], "POST /ui/{assistant_id}");
    assert.ok(document.paths["/ui/{agent}/{file}"], "GET /ui/{agent}/{file}");
  });

  it("a pushed UI message arrives as a custom event and in the state's `ui` channel", async () => {
    const thread = await client.threads.create();
    const custom: UiMessage[] = [];
    let last: { ui?: UiMessage[] } | undefined;
    for await (const part of client.runs.stream(thread.thread_id, "agent", {
      input: { title: "Streamed card" },
      streamMode: ["custom", "values"],
    })) {
      if (part.event === "custom") custom.push(part.data as UiMessage);
      if (part.event === "values") last = part.data as { ui?: UiMessage[] };
    }
    assert.equal(custom.length, 1);
    const [message] = custom;
    assert.equal(message!.type, "ui");
    assert.equal(message!.name, "card");
    assert.deepEqual(message!.props, { title: "Streamed card" });
    assert.equal(typeof message!.metadata?.run_id, "string");
    assert.deepEqual(last?.ui, [message]);
    const state = await client.threads.getState<{ ui: UiMessage[] }>(thread.thread_id);
    assert.deepEqual(state.values.ui, [message]);
  });

  describe("in a browser", () => {
    let browser: Browser;
    before(async () => {
      browser = await launchChromium();
    });
    after(() => browser?.close());

    it("useStream runs the graph and LoadExternalComponent renders the pushed props with the bundle's CSS and hooks", async () => {
      const script = await harnessScript();
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      // The page is served from Berth's own origin (intercepted), so it needs no CORS; React comes from node_modules.
      await page.route(`${berth.url}/__page/**`, (route) => {
        const path = new URL(route.request().url()).pathname;
        if (path.endsWith("/harness.js")) return route.fulfill({ contentType: "text/javascript", body: script });
        return route.fulfill({
          contentType: "text/html",
          body: '<!doctype html><html><body><div id="root"></div><script src="/__page/harness.js"></script></body></html>',
        });
      });
      const title = "Rendered from props";
      await page.goto(`${berth.url}/__page/index.html?title=${encodeURIComponent(title)}&key=${API_KEY}`);
      // Locators reach into the open shadow root LoadExternalComponent renders in.
      const card = page.locator("#card-title");
      await card.waitFor();
      assert.equal(await card.textContent(), title);
      assert.equal(await page.locator("#card-label").textContent(), "shared by the page");
      // The component's hooks run in the page's React: its effect ran, its state updates, its stream context is the page's.
      await page.locator("#card-mounted").waitFor();
      assert.equal(await page.locator("#card-assistant").textContent(), "agent");
      const clicks = page.locator("#card-clicks");
      await clicks.click();
      await clicks.click();
      await page.locator("#card-clicks", { hasText: "2" }).waitFor();
      const border = await page.locator("#card").evaluate((element) => getComputedStyle(element).borderTopColor);
      assert.equal(border, "rgb(0, 128, 0)");
      await page.locator("#run-done").waitFor();
      assert.deepEqual(errors, []);
      await page.close();
    });
  });
});

describe("generative UI: http.disable_ui", () => {
  it("serves neither /ui route, and /openapi.json lists none", async () => {
    const berth = await startBerth({ project: "generative-ui/disabled" });
    try {
      const fragment = await request(berth.url, "POST", "/ui/agent", { name: "agent" });
      assert.equal(fragment.status, 404);
      assert.equal((await fetch(`${berth.url}/ui/agent/entrypoint.js`)).status, 404);
      const document = (await (await fetch(`${berth.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      assert.deepEqual(
        Object.keys(document.paths).filter((path) => path.startsWith("/ui")),
        [],
      );
    } finally {
      await berth.stop();
    }
  });
});

describe("generative UI: a component file that does not bundle", () => {
  it("stops the start, naming the file", async () => {
    const { code, output } = await runBerthExpectingFailure({ project: "generative-ui/broken" });
    assert.notEqual(code, 0);
    assert.match(output, /ui "agent": \S+broken-ui\.tsx does not bundle/);
  });

  it("fails `berth check`, naming the file", async () => {
    const failure = await run(process.execPath, [BERTH_BIN, "check", join(FIXTURES, "generative-ui", "broken")]).then(
      () => assert.fail("berth check passed"),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(failure.code, 1);
    assert.match(failure.stderr, /broken-ui\.tsx does not bundle/);
  });

  it("`berth check` bundles a working project", async () => {
    const { stdout } = await run(process.execPath, [BERTH_BIN, "check", join(FIXTURES, PROJECT)]);
    assert.match(stdout, /1 graph loaded: agent/);
  });
});
