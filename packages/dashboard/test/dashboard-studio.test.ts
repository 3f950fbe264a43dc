// Runs in the SQLite pass only: its subject is the dashboard in a browser,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type ControlPlane, type Deployment, deployedTarball, packFixture, startControlPlane } from "@berth/test-support";
import { Client } from "@langchain/langgraph-sdk";
import type { Browser, Page } from "playwright-core";
import { launchChromium, newPage, recordPolicyViolations, screenshot, signIn } from "@berth/test-support/browser";

/** This package's fixture projects. */
const FIXTURES = fileURLToPath(new URL("fixtures/", import.meta.url));

// What fixtures/studio-app's "studio" graph writes and asks (its studio.ts says the same).
const RESEARCHED = "Dear Ada, a warm answer (notes: searched, summarized).";
const PLAIN = "Dear Ada, a warm answer.";
const QUESTION = "Publish this answer?";
// What the "chat" graph's model streams (its chat.ts says the same).
const STREAMED = "This answer streams from a chat model, a few characters at a time.";

/** Waits up to a minute per step: a build, a run, a resumed run. */
const STEP_MS = 60_000;

describe("the Studio, in headless Chromium", () => {
  let cp: ControlPlane;
  let deployment: Deployment;
  let browser: Browser;
  let page: Page;
  let violations: () => string[];

  const graph = () => page.getByRole("region", { name: "Graph" });
  const runPanel = () => page.getByRole("region", { name: "Run" });
  const state = () => page.getByRole("region", { name: "State" });
  const status = () => page.getByTestId("studio-status");
  /** A node of the graph, by its id in the drawing (`research:search` inside a subgraph). */
  const node = (id: string) => page.getByTestId(`studio-node-${id}`);
  const runButton = () => runPanel().getByRole("button", { name: /^Run on/ });

  before(async () => {
    cp = await startControlPlane({ listener: true });
    deployment = await deployedTarball(cp.admin, "studio", packFixture("studio-app", {}, FIXTURES));
    browser = await launchChromium();
    page = await newPage(browser, STEP_MS);
    // Wide enough for the run panel, the graph and the time travel side by side.
    await page.setViewportSize({ width: 1600, height: 1000 });
    violations = await recordPolicyViolations(page);
    await signIn(page, cp.url, cp.adminKey, cp.defaultTenantId);
  });
  after(async () => {
    await browser?.close();
    await cp?.stop();
  });

  test("the Studio's URL opens the graph of the assistant picked by name: nodes, terminals, conditional edges", async () => {
    await page.goto(`${cp.url}/#/deployments/${deployment.id}/studio`);
    await page.getByRole("heading", { name: "Studio of studio" }).waitFor();
    const assistant = runPanel().getByRole("combobox", { name: "Assistant" });
    await assistant.locator("option", { hasText: "pipeline" }).waitFor({ state: "attached" });
    await assistant.selectOption({ label: "studio" });
    assert.match(page.url(), /studio\?assistant=[0-9a-f-]{36}$/);

    for (const id of ["__start__", "plan", "research", "write", "review", "__end__"]) await node(id).waitFor();
    await graph().getByRole("group", { name: "Subgraph (folded) research" }).waitFor();
    await graph().getByRole("img", { name: "Conditional edge from plan to research" }).waitFor({ state: "attached" });
    await graph().getByRole("img", { name: "Conditional edge from plan to write" }).waitFor({ state: "attached" });
    await graph().getByRole("img", { name: "Edge from write to review" }).waitFor({ state: "attached" });
    assert.equal(await graph().getByText("conditional", { exact: true }).count(), 2, "both branches of plan are labelled");
    assert.equal(await node("research:search").count(), 0, "the subgraph starts folded");

    await graph().getByRole("button", { name: "Expand subgraph research" }).click();
    await node("research:search").waitFor();
    await node("research:summarize").waitFor();
    await page.getByTestId("studio-group-research").waitFor();
    assert.equal(await node("research").count(), 0, "the folded node gave way to the subgraph's nodes");
    await graph().getByRole("img", { name: "Conditional edge from plan to research:search" }).waitFor({ state: "attached" });
    await graph().getByRole("img", { name: "Edge from research:summarize to write" }).waitFor({ state: "attached" });
    await screenshot(page, "studio-graph");
  });

  test("the config is checked against the graph's schema as it is typed, and its form writes the JSON", async () => {
    const config = runPanel().getByRole("group", { name: "Config" });
    await config.getByLabel("Config (JSON)").fill('{"user_name": 42}');
    await config.getByRole("alert").getByText('Config: "user_name" must be string, not integer').waitFor();
    assert.equal(await runButton().isDisabled(), true, "a config the schema refuses is not run");

    await config.getByLabel("user_name").fill("Ada");
    await config.getByLabel("tone").fill("warm");
    assert.equal(await config.getByRole("alert").count(), 0);
    assert.deepEqual(JSON.parse(await config.getByLabel("Config (JSON)").inputValue()), { user_name: "Ada", tone: "warm" });

    await config.getByLabel("Config (JSON)").fill("[1]");
    await config.getByRole("alert").getByText("Config: must be a JSON object, not array").waitFor();
    await config.getByLabel("Config (JSON)").fill('{"user_name": "Ada", "tone": "warm"}');
    assert.equal(await config.getByLabel("tone").inputValue(), "warm", "the form reads the JSON back");
    assert.equal(await runButton().isDisabled(), false);
  });

  test("a run streams onto the graph: the running node is marked, each node shows its update, the interrupt is asked", async () => {
    // Checked on every DOM change: which nodes were seen marked running (none is after the run).
    await page.evaluate(() => {
      const seen = window as unknown as { runningSeen?: string[] };
      seen.runningSeen = [];
      new MutationObserver(() => {
        for (const element of document.querySelectorAll("[data-status='running']")) {
          const id = element.getAttribute("data-testid") ?? "";
          if (!seen.runningSeen!.includes(id)) seen.runningSeen!.push(id);
        }
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    await runPanel().getByLabel("Message").fill("please research this");
    await runButton().click();
    await page.waitForFunction(() =>
      (window as unknown as { runningSeen: string[] }).runningSeen.includes("studio-node-research:search"),
    );
    await screenshot(page, "studio-running");

    await state().getByText(RESEARCHED).waitFor();
    const interrupt = page.getByRole("region", { name: "Interrupt" });
    await interrupt.getByText(QUESTION).waitFor();
    await status().getByText("Stopped at an interrupt").waitFor();
    const seen = await page.evaluate(() => (window as unknown as { runningSeen: string[] }).runningSeen);
    for (const id of ["plan", "research:search", "research:summarize", "write"]) {
      assert.ok(seen.includes(`studio-node-${id}`), `${id} was marked running (seen: ${seen.join(", ")})`);
    }
    // Each node keeps its latest update; "review" stopped at its interrupt.
    await node("research:search").getByText('{"notes":["searched"]}').waitFor();
    await node("write").getByText("Dear Ada, a warm answer").waitFor();
    assert.equal(await node("review").getAttribute("data-status"), "interrupted");
    assert.match(page.url(), /studio\?assistant=[0-9a-f-]{36}&thread=[0-9a-f-]{36}$/, "the thread is in the URL");
    await screenshot(page, "studio-interrupt");

    // A node's name opens its whole update (a button, so the keyboard reaches it too).
    await graph().getByRole("button", { name: "Show the update of write" }).press("Enter");
    const detail = page.getByRole("region", { name: "Node write" });
    await detail.getByText('"type": "ai"').waitFor();
    await detail.getByRole("button", { name: "Close" }).click();

    await interrupt.getByLabel("Your answer").fill("yes, publish it");
    await interrupt.getByRole("button", { name: "Resume" }).click();
    await state().getByText("Reviewer said: yes, publish it").waitFor();
    await status().getByText("Finished").waitFor();
    assert.equal(await interrupt.count(), 0, "the interrupt is answered");
    const trace = page.getByRole("link", { name: "Trace of the last run" });
    assert.match((await trace.getAttribute("href")) ?? "", new RegExp(`^#/deployments/${deployment.id}/traces/[0-9a-f-]{36}$`));
  });

  test("a checkpoint picked in the time travel beside the graph marks the nodes it runs next", async () => {
    const timeline = page.getByRole("region", { name: "Time travel" }).getByRole("list", { name: "Checkpoints, newest first" });
    const afterPlan = timeline.getByRole("listitem").filter({ hasText: "by plan" }).filter({ hasText: "next research" });
    await afterPlan.getByRole("button").first().click();
    // The subgraph is expanded: its group is what "research" runs as.
    await page.locator("[data-testid='studio-group-research'].studio-node-next").waitFor();
    assert.equal(await page.locator(".studio-node-next").count(), 1, "research only");
    // Every edge is still drawn once the nodes changed (a node's handles are given, not measured again).
    assert.equal(await graph().locator(".react-flow__edge").count(), 7);
    await screenshot(page, "studio-checkpoint");
  });

  test("a reload keeps the thread; a breakpoint before a node stops the run there until Continue", async () => {
    await page.reload();
    await state().getByText("Reviewer said: yes, publish it").waitFor();
    // A link to the thread alone (as a trace gives) opens it with the assistant it ran with.
    const assistantId = new URL(page.url().replace("#/", "")).searchParams.get("assistant");
    const threadId = new URL(page.url().replace("#/", "")).searchParams.get("thread");
    await page.goto(`${cp.url}/#/deployments/${deployment.id}/studio?thread=${threadId}`);
    await page.reload();
    await state().getByText("Reviewer said: yes, publish it").waitFor();
    assert.equal(await runPanel().getByRole("combobox", { name: "Assistant" }).inputValue(), assistantId);
    // The nodes show what they last wrote on the thread, read from its history.
    await node("plan").getByText('{"route":"research"}').waitFor();
    await node("review").getByText("Reviewer said: yes, publish it").waitFor();
    assert.equal(await node("review").getAttribute("data-status"), "done");

    await runPanel().getByRole("button", { name: "New thread" }).click();
    await page.getByText("No thread open: Run starts one.").waitFor();
    await runPanel().getByRole("group", { name: "Interrupt before" }).getByLabel("write").check();
    await runPanel().getByLabel("Message").fill("just write");
    await runButton().click();
    const breakpoint = page.getByRole("region", { name: "Breakpoint" });
    await breakpoint.getByText("Next: write").waitFor();
    await status().getByText("Stopped at a breakpoint; next: write").waitFor();
    await page.locator("[data-testid='studio-node-write'].studio-node-next").waitFor();
    assert.equal(await node("plan").getAttribute("data-status"), "done");
    assert.equal(await node("write").getAttribute("data-status"), "idle", "write has not run");
    assert.equal(await state().getByText(PLAIN).count(), 0);
    await screenshot(page, "studio-breakpoint");

    await breakpoint.getByRole("button", { name: "Continue" }).click();
    await state().getByText(PLAIN).waitFor();
    const interrupt = page.getByRole("region", { name: "Interrupt" });
    await interrupt.getByText(QUESTION).waitFor();
    await interrupt.getByLabel("Your answer").fill("fine");
    await interrupt.getByRole("button", { name: "Resume" }).click();
    await state().getByText("Reviewer said: fine").waitFor();
    await status().getByText("Finished").waitFor();

    // After a node: the run on the same thread stops once plan has run, write next.
    await runPanel().getByRole("group", { name: "Interrupt before" }).getByLabel("write").uncheck();
    await runPanel().getByRole("group", { name: "Interrupt after" }).getByLabel("plan").check();
    await runPanel().getByLabel("Message").fill("once more");
    // A message-based graph's other input keys go with the message.
    await runPanel().getByText("Other input keys").click();
    await runPanel().getByLabel("Input (JSON)").fill('{"notes": ["from the input"]}');
    await runButton().click();
    await status().getByText("Stopped at a breakpoint; next: write").waitFor();
    assert.equal(await node("plan").getAttribute("data-status"), "done");
    await breakpoint.getByRole("button", { name: "Continue" }).click();
    await interrupt.getByText(QUESTION).waitFor();
    await state().getByText("Dear Ada, a warm answer (notes: from the input).").waitFor();
    await interrupt.getByLabel("Your answer").fill("again");
    await interrupt.getByRole("button", { name: "Resume" }).click();
    await state().getByText("Reviewer said: again").waitFor();
    await status().getByText("Finished").waitFor();
  });

  test("a graph whose input is no conversation gets a form from its input schema", async () => {
    await runPanel().getByRole("combobox", { name: "Assistant" }).selectOption({ label: "pipeline" });
    await node("expand").waitFor();
    const input = runPanel().getByRole("group", { name: "Input" });
    await input.getByLabel("topic").fill("bolts");
    await input.getByLabel("count").fill("3");
    assert.deepEqual(JSON.parse(await input.getByLabel("Input (JSON)").inputValue()), { topic: "bolts", count: 3 });
    assert.equal(await runPanel().getByLabel("Message").count(), 0, "no chat box for a graph without messages");
    await runButton().click();
    await status().getByText("Finished").waitFor();
    await state().getByText('"bolts #3"').waitFor();
    assert.equal(await node("expand").getAttribute("data-status"), "done");
    await screenshot(page, "studio-pipeline");
  });

  test("an assistant of the graph is picked by its name, and an older version's config loaded from its list", async () => {
    const client = new Client({
      apiUrl: deployment.source_config.custom_url!,
      apiKey: cp.adminKey,
      defaultHeaders: { "x-tenant-id": cp.defaultTenantId },
    });
    const made = await client.assistants.create({
      graphId: "studio",
      name: "Grace's writer",
      config: { configurable: { user_name: "Grace" } },
    });
    await client.assistants.update(made.assistant_id, { config: { configurable: { user_name: "Grace", tone: "dry" } } });

    await page.reload();
    const assistant = runPanel().getByRole("combobox", { name: "Assistant" });
    await assistant.locator("option", { hasText: "Grace's writer (graph studio)" }).waitFor({ state: "attached" });
    await assistant.selectOption({ label: "Grace's writer (graph studio)" });
    const config = runPanel().getByRole("group", { name: "Config" });
    await config.getByLabel("tone").and(page.locator("[value='dry']")).waitFor();
    const version = runPanel().getByRole("combobox", { name: "Version" });
    assert.equal(await version.locator("option:checked").textContent(), "Version 2 (latest)");
    await version.selectOption({ label: "Version 1" });
    assert.deepEqual(JSON.parse(await config.getByLabel("Config (JSON)").inputValue()), { user_name: "Grace" });
    // Run as it was: the latest version's config would still give its tone.
    await runPanel().getByRole("button", { name: "Make version 1 the latest" }).click();
    await version.locator("option:checked", { hasText: "Version 1 (latest)" }).waitFor({ state: "attached" });
    assert.equal(await runPanel().getByRole("note").count(), 0);

    await runPanel().getByLabel("Message").fill("hello");
    await runButton().click();
    await state().getByText("Dear Grace, a plain answer.").waitFor();
    await page.getByRole("region", { name: "Interrupt" }).getByText(QUESTION).waitFor();
  });

  test("a chat model's tokens stream onto the node that calls it while it runs", async () => {
    await runPanel().getByRole("combobox", { name: "Assistant" }).selectOption({ label: "chat" });
    await node("answer").waitFor();
    // Checked on every DOM change: the node showed the answer in part before it showed it whole.
    await page.evaluate((full) => {
      const seen = window as unknown as { partialSeen?: boolean };
      new MutationObserver(() => {
        const text = document.querySelector("[data-testid='studio-node-answer'] .studio-node-streaming")?.textContent ?? "";
        seen.partialSeen ||= text.length > 0 && text.length < full.length && full.startsWith(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    }, STREAMED);
    await runPanel().getByLabel("Message").fill("talk to me");
    await runButton().click();
    await page.waitForFunction(() => (window as unknown as { partialSeen?: boolean }).partialSeen);
    await screenshot(page, "studio-streaming");
    await state().getByText(STREAMED).waitFor();
    await status().getByText("Finished").waitFor();
    // Once it ended, the node shows its update: the message the model wrote.
    await node("answer").getByText(STREAMED).waitFor();
    assert.equal(await node("answer").getAttribute("data-status"), "done");
    assert.equal(await node("answer").locator(".studio-node-streaming").count(), 0);
  });

  test("all of it ran within the page's Content-Security-Policy", async () => {
    assert.deepEqual(violations(), []);
  });
});
