// Runs in the SQLite pass only: its subject is the dashboard in a browser,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type ControlPlane, type Deployment, deployedTarball, packFixture, startControlPlane } from "@berth/test-support";
import type { Browser, Locator, Page } from "playwright-core";
import { launchChromium, newPage, recordPolicyViolations, screenshot, signIn } from "@berth/test-support/browser";

/** This package's fixture projects. */
const FIXTURES = fileURLToPath(new URL("fixtures/", import.meta.url));

// What fixtures/conversation-app streams and asks (its agent.ts exports the same strings).
const REPLY = "Here is a draft reply, streamed token by token.";
const QUESTION = "Shall I send the draft?";
const ANSWER = "yes, send it";

/** Waits up to a minute per step: a build, a first token, a resumed run. */
const STEP_MS = 60_000;

describe("the dashboard's conversation browser, in headless Chromium", () => {
  let cp: ControlPlane;
  let deployment: Deployment;
  let browser: Browser;
  let page: Page;
  /** The conversation browser on the page: the dashboard around it has labels of its own. */
  let view: Locator;
  let threadId: string;
  let violations: () => string[];

  before(async () => {
    cp = await startControlPlane({ listener: true });
    deployment = await deployedTarball(cp.admin, "conversations", packFixture("conversation-app", {}, FIXTURES));
    browser = await launchChromium();
    page = await newPage(browser, STEP_MS);
    violations = await recordPolicyViolations(page);
    view = page.getByTestId("conversation-browser");
  });
  after(async () => {
    await browser?.close();
    await cp?.stop();
  });

  test("the deployment page's Conversations link opens the browser, which lists the deployment's assistants", async () => {
    await signIn(page, cp.url, cp.adminKey, cp.defaultTenantId);
    await page.goto(`${cp.url}/#/deployments/${deployment.id}`);
    await page.getByRole("link", { name: "Conversations", exact: true }).click();
    assert.match(page.url(), new RegExp(`#/deployments/${deployment.id}/conversations$`));
    await view.getByRole("heading", { name: "Conversations", exact: true }).waitFor();
    await view
      .getByRole("combobox", { name: "Assistant", exact: true })
      .locator("option", { hasText: "agent" })
      .waitFor({ state: "attached" });
    await screenshot(page, "conversations-open");
  });

  test("a message sent from the keyboard streams into the page token by token", async () => {
    // Checked on every DOM change: a reply shown partly before it is shown whole.
    await page.evaluate((full) => {
      const seen = window as unknown as { partialReplySeen?: boolean };
      new MutationObserver(() => {
        seen.partialReplySeen ||= [...document.querySelectorAll(".cb-conversation .cb-message-assistant .cb-text")].some(
          (element) => {
            const text = element.textContent ?? "";
            return text.length > 0 && text.length < full.length && full.startsWith(text);
          },
        );
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    }, REPLY);
    const message = view.getByRole("textbox", { name: "Message", exact: true });
    await message.fill("Please draft a reply");
    await message.press("Control+Enter");
    await page.waitForFunction(() => (window as unknown as { partialReplySeen?: boolean }).partialReplySeen);
    await screenshot(page, "conversations-streaming");

    const conversation = view.getByRole("region", { name: "Conversation" });
    await conversation.getByText(REPLY, { exact: true }).waitFor();
    await conversation.getByText("Please draft a reply", { exact: true }).waitFor();
    const status = await conversation.getByRole("status").textContent();
    const tokens = Number(/(\d+) tokens? streamed/.exec(status ?? "")?.[1] ?? 0);
    assert.ok(tokens > 1, `the live view counted ${tokens} tokens: ${status}`);
    const heading = await view.getByRole("heading", { name: /^Thread [0-9a-f-]{36}/ }).textContent();
    threadId = /[0-9a-f-]{36}/.exec(heading ?? "")![0];
  });

  test("the interrupt's question shows on the page, and the answer typed there resumes the run", async () => {
    const interrupt = view.getByRole("region", { name: "Interrupt" });
    await interrupt.getByText(QUESTION).waitFor();
    await view
      .getByRole("heading", { name: /^Thread / })
      .getByText("interrupted")
      .waitFor();
    await screenshot(page, "conversations-interrupt");

    await interrupt.getByLabel("Your answer").fill(ANSWER);
    await interrupt.getByRole("button", { name: "Resume" }).click();
    const conversation = view.getByRole("region", { name: "Conversation" });
    await conversation.getByText(`You answered: ${ANSWER}`, { exact: true }).waitFor();
    await conversation.getByRole("status").getByText("Finished").waitFor();
    await view
      .getByRole("heading", { name: /^Thread / })
      .getByText("idle")
      .waitFor();
    assert.equal(await interrupt.count(), 0, "the interrupt form is gone once answered");
    await screenshot(page, "conversations-resumed");
  });

  test("the thread is listed with its status, its runs (the interrupted one, the resumed one) and its checkpoints", async () => {
    const threads = view.getByRole("list", { name: "Threads" });
    const listed = threads.getByRole("button", { name: new RegExp(threadId.slice(-8)) });
    await listed.getByText("idle").waitFor();

    const runs = view.getByRole("region", { name: "Runs" }).getByRole("row");
    await runs.filter({ hasText: "success" }).waitFor();
    await runs.filter({ hasText: "interrupted" }).waitFor();
    assert.equal(await runs.count(), 3, "a header row and two runs");

    await view
      .getByRole("region", { name: "State history" })
      .getByText(/^Show \d+ checkpoints$/)
      .click();
    const checkpoints = view.getByRole("list", { name: "Checkpoints, newest first" }).getByRole("listitem");
    await checkpoints.first().waitFor();
    assert.ok((await checkpoints.count()) >= 4, "input, draft, the interrupt and the resumed review each left a checkpoint");
    const newest = checkpoints.first();
    await newest.locator("summary").focus();
    await page.keyboard.press("Enter");
    await newest.getByText(`You answered: ${ANSWER}`).waitFor();
    await screenshot(page, "conversations-history");
  });

  test("threads are searched by status and metadata", async () => {
    const search = view.getByRole("search", { name: "Search threads" });
    const threads = view.getByRole("list", { name: "Threads" });
    await search.getByLabel("Status").selectOption("interrupted");
    await search.getByRole("button", { name: "Search" }).click();
    await view.getByText("No threads match.").waitFor();

    await search.getByLabel("Status").selectOption("idle");
    await search.getByLabel("Metadata (JSON)").fill("not json");
    await search.getByRole("button", { name: "Search" }).click();
    await search.getByRole("alert").getByText("must be a JSON object").waitFor();

    await search.getByLabel("Metadata (JSON)").fill('{"graph_id": "agent"}');
    await search.getByRole("button", { name: "Search" }).click();
    await threads.getByRole("button", { name: new RegExp(threadId.slice(-8)) }).waitFor();
    await screenshot(page, "conversations-search");
  });

  test("a key the router refuses reads, in the page, as the router's answer rather than a network error", async () => {
    const answer = await page.evaluate(async (url) => {
      const response = await fetch(`${url}/threads/search`, {
        method: "POST",
        headers: { "x-api-key": "berth_nobody", "content-type": "application/json" },
        body: "{}",
      });
      return { status: response.status, body: (await response.json()) as { detail?: string } };
    }, deployment.source_config.custom_url!);
    assert.deepEqual(answer, { status: 401, body: { detail: "Invalid API key" } });
  });

  test("all of it ran within the page's Content-Security-Policy: the router is the one other origin it called", async () => {
    assert.deepEqual(violations(), []);
  });
});
