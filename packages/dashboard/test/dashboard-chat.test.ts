// Runs in the SQLite pass only: its subject is the dashboard in a browser,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { type ControlPlane, type Deployment, deployedTarball, packFixture, startControlPlane } from "@berth/test-support";
import type { Browser, Locator, Page } from "playwright-core";
import { launchChromium, newPage, recordPolicyViolations, screenshot, signIn } from "@berth/test-support/browser";

/** This package's fixture projects. */
const FIXTURES = fileURLToPath(new URL("fixtures/", import.meta.url));

/** What the user asks: the thread's title in the list. */
const QUESTION = "What's the weather in Paris?";
/** An assistant of the fixture's graph with a name of its own, which the page shows rather than its id. */
const ASSISTANT = "Weather desk";
/** How many threads the list is given to page through. */
const MANY = 1000;
/** Waits up to a minute per step: a build, a run, a page of threads. */
const STEP_MS = 60_000;

describe("the dashboard's chat: tool calls, Markdown and a thousand threads, in headless Chromium", () => {
  let cp: ControlPlane;
  let deployment: Deployment;
  let sdk: Client;
  let browser: Browser;
  let page: Page;
  let view: Locator;
  let conversation: Locator;
  let threadId: string;
  let violations: () => string[];

  before(async () => {
    cp = await startControlPlane({ listener: true });
    deployment = await deployedTarball(cp.admin, "chat", packFixture("tool-chat-app", {}, FIXTURES));
    sdk = new Client({
      apiUrl: deployment.source_config.custom_url!,
      apiKey: cp.adminKey,
      defaultHeaders: { "x-tenant-id": cp.defaultTenantId },
    });
    await sdk.assistants.create({ graphId: "weather", name: ASSISTANT });
    browser = await launchChromium();
    page = await newPage(browser, STEP_MS);
    violations = await recordPolicyViolations(page);
    view = page.getByTestId("conversation-browser");
    conversation = view.getByRole("region", { name: "Conversation" });
  });
  after(async () => {
    await browser?.close();
    await cp?.stop();
  });

  test("a reply that calls a tool shows the call's name and arguments with the tool's answer under it", async () => {
    await signIn(page, cp.url, cp.adminKey, cp.defaultTenantId);
    await page.goto(`${cp.url}/#/deployments/${deployment.id}/conversations`);
    const assistant = view.getByRole("combobox", { name: "Assistant", exact: true });
    await assistant.locator("option", { hasText: ASSISTANT }).waitFor({ state: "attached" });
    await assistant.selectOption({ label: `${ASSISTANT} (graph weather)` });
    await view.getByRole("textbox", { name: "Message", exact: true }).fill(QUESTION);
    await view.getByRole("button", { name: "Send", exact: true }).click();

    await conversation.getByRole("status").getByText("Finished").waitFor();
    const call = conversation.getByRole("region", { name: "Tool call get_weather" });
    await call.waitFor();
    assert.deepEqual(JSON.parse((await call.locator(".cb-tool-args").textContent()) ?? ""), { city: "Paris" });
    await call.getByText('"forecast": "sunny"').waitFor();
    assert.equal(await conversation.locator(".cb-message-tool").count(), 0, "the tool's answer is not a message of its own");
    await conversation.locator(".cb-message-assistant .cb-role", { hasText: ASSISTANT }).first().waitFor();
    await screenshot(page, "chat-tool-calls");
  });

  test("the final answer's Markdown is rendered: a heading, a list, bold text and a code block", async () => {
    const answer = conversation.locator(".cb-message-assistant").last();
    await answer.getByRole("heading", { name: "Weather in Paris" }).waitFor();
    assert.equal(await answer.locator("li").count(), 2);
    assert.equal(await answer.locator("strong").textContent(), "Sunny");
    assert.match((await answer.locator("pre code").textContent()) ?? "", /"temperature_c": 21/);
    const text = (await conversation.textContent()) ?? "";
    assert.ok(!text.includes("**") && !text.includes("```"), "no Markdown mark is shown as text");
    await answer.scrollIntoViewIfNeeded();
    await screenshot(page, "chat-markdown");
  });

  test("the thread is listed by its first message with a preview and the assistant's name; its run links to its trace", async () => {
    const heading = await view.getByRole("heading", { name: /^Thread [0-9a-f-]{36}/ }).textContent();
    threadId = /[0-9a-f-]{36}/.exec(heading ?? "")![0];
    const row = view.getByRole("list", { name: "Threads" }).getByRole("button", { name: new RegExp(threadId.slice(-8)) });
    await row.locator(".cb-thread-title", { hasText: QUESTION }).waitFor();
    await row.locator(".cb-thread-preview", { hasText: "Weather in Paris Sunny all day" }).waitFor();
    await row.getByText(ASSISTANT).waitFor();

    const [run] = await sdk.runs.list(threadId);
    const runs = view.getByRole("region", { name: "Runs" });
    await runs.getByRole("cell", { name: ASSISTANT, exact: true }).waitFor();
    const trace = runs.getByRole("link", { name: `Trace of run ${run!.run_id.slice(-8)}` });
    assert.equal(await trace.getAttribute("href"), `#/deployments/${deployment.id}/traces/${run!.run_id}`);
    const studio = await view.getByRole("link", { name: "Open in Studio" }).getAttribute("href");
    assert.equal(studio, `#/deployments/${deployment.id}/studio?assistant=${run!.assistant_id}&thread=${threadId}`);
  });

  test("the checkpoints fold away as a whole, and each opens to its values", async () => {
    const history = view.getByRole("region", { name: "State history" });
    const checkpoints = history.getByRole("list", { name: "Checkpoints, newest first" });
    assert.equal(await checkpoints.isVisible(), false, "folded at first");
    await history.getByText(/^Show \d+ checkpoints$/).click();
    const newest = checkpoints.getByRole("listitem").first();
    await newest.locator("summary").click();
    await newest.getByText('"name": "get_weather"').waitFor();
  });

  test("with a thousand threads the list draws a page, and scrolling fetches the rest without drawing them all", async () => {
    for (let start = 0; start < MANY; start += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, offset) =>
          sdk.threads.create({ metadata: { title: `Imported thread ${String(start + offset).padStart(4, "0")}` } }),
        ),
      );
    }
    await page.reload();
    const threads = view.getByRole("list", { name: "Threads" });
    const rows = threads.getByRole("listitem");
    await threads
      .getByRole("button", { name: /Imported thread 09\d\d/ })
      .first()
      .waitFor();
    const count = view.locator(".cb-thread-count");
    assert.equal(await count.textContent(), `50 of ${MANY + 1} threads loaded`);
    assert.ok((await rows.count()) < 50, `only the rows in view are drawn: ${await rows.count()}`);
    await screenshot(page, "chat-threads-1000");

    await view.getByRole("button", { name: "Load more threads" }).click();
    await page.waitForFunction(() => document.querySelector(".cb-thread-count")?.textContent?.startsWith("100 of"));

    // Scrolled to the end, page after page, until the oldest thread (the weather chat) is reached.
    const scroller = view.getByTestId("thread-scroller");
    const oldest = threads.getByRole("button", { name: new RegExp(threadId.slice(-8)) });
    while (!(await oldest.isVisible())) {
      const before = await count.textContent();
      await scroller.evaluate((element) => element.scrollTo({ top: element.scrollHeight }));
      await page.waitForFunction(
        ({ text, id }) =>
          document.querySelector(".cb-thread-count")?.textContent !== text ||
          [...document.querySelectorAll(".cb-thread")].some((row) => row.getAttribute("title") === id),
        { text: before, id: threadId },
      );
    }
    assert.equal(await count.textContent(), `${MANY + 1} threads`);
    assert.ok((await rows.count()) < 50, `only the rows in view are drawn: ${await rows.count()}`);
    assert.equal(await rows.last().getAttribute("aria-posinset"), String(MANY + 1));
  });

  test("all of it ran within the page's Content-Security-Policy", async () => {
    assert.deepEqual(violations(), []);
  });
});
