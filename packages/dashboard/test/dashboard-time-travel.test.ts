// Runs in the SQLite pass only: its subject is the dashboard in a browser,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type ControlPlane, type Deployment, deployedTarball, packFixture, startControlPlane } from "@berth/test-support";
import { Client, type ThreadState } from "@langchain/langgraph-sdk";
import type { Browser, Locator, Page } from "playwright-core";
import { launchChromium, newPage, recordPolicyViolations, screenshot, signIn } from "@berth/test-support/browser";

/** This package's fixture projects. */
const FIXTURES = fileURLToPath(new URL("fixtures/", import.meta.url));

// What fixtures/studio-app's "studio" graph writes and asks (its studio.ts says the same).
const WRITTEN = "Dear Ada, a plain answer.";
const QUESTION = "Publish this answer?";
/** The answer the test puts in place of "write"'s, recognisable wherever it shows up. */
const EDITED = "Dear Ada, an answer rewritten by time travel.";

/** Waits up to a minute per step: a build, a run, a resumed run. */
const STEP_MS = 60_000;

type Message = { type?: string; content?: unknown };
type Values = { messages?: Message[] };

const messagesOf = (state: ThreadState): Message[] => (state.values as Values).messages ?? [];
const lastText = (state: ThreadState) => String(messagesOf(state).at(-1)?.content ?? "");

describe("time travel in the Studio, in headless Chromium", () => {
  let cp: ControlPlane;
  let deployment: Deployment;
  let client: Client;
  let assistantId: string;
  let threadId: string;
  let browser: Browser;
  let page: Page;
  /** The time-travel column of the Studio. */
  let view: Locator;
  let violations: () => string[];
  /** The checkpoint "write" left (the answer written, "review" next), and the edit's fork of it. */
  let written: ThreadState;
  let forkId: string;

  const history = () => client.threads.getHistory(threadId, { limit: 100 });
  const timeline = () => view.getByRole("list", { name: "Checkpoints, newest first" });
  const panel = () => view.getByRole("region", { name: "Checkpoint", exact: true });
  /** The timeline's row of a checkpoint, found by what it shows. */
  const row = (...texts: string[]) =>
    texts.reduce((found, text) => found.filter({ hasText: text }), timeline().getByRole("listitem"));

  before(async () => {
    cp = await startControlPlane({ listener: true });
    deployment = await deployedTarball(cp.admin, "time-travel", packFixture("studio-app", {}, FIXTURES));

    // A thread run to its end as a developer would from code: the answer written, the review interrupted, resumed.
    client = new Client({
      apiUrl: deployment.source_config.custom_url!,
      apiKey: cp.adminKey,
      defaultHeaders: { "x-tenant-id": cp.defaultTenantId },
    });
    const [assistant] = await client.assistants.search({ graphId: "studio", limit: 1 });
    assistantId = assistant!.assistant_id;
    threadId = (await client.threads.create()).thread_id;
    await client.runs.wait(threadId, assistantId, {
      input: { messages: [{ type: "human", content: "hello" }] },
      config: { configurable: { user_name: "Ada" } },
    });
    assert.deepEqual((await client.threads.getState(threadId)).next, ["review"]);
    await client.runs.wait(threadId, assistantId, { command: { resume: "ok" } });
    const states = await history();
    written = states.find((state) => state.next.includes("review") && state.metadata?.source === "loop")!;
    assert.ok(written, "the history holds the checkpoint after write");
    assert.equal(lastText(written), WRITTEN);

    browser = await launchChromium();
    page = await newPage(browser, STEP_MS);
    violations = await recordPolicyViolations(page);
    view = page.getByRole("region", { name: "Time travel" });
    await signIn(page, cp.url, cp.adminKey, cp.defaultTenantId);
  });
  after(async () => {
    await browser?.close();
    await cp?.stop();
  });

  test("the Studio opened on a thread lists its checkpoints, newest first, with step, source, writer and next", async () => {
    await page.goto(`${cp.url}/#/deployments/${deployment.id}/studio?assistant=${assistantId}&thread=${threadId}`);
    await row("by review", "end").waitFor();
    const states = await history();
    assert.equal(await timeline().getByRole("listitem").count(), states.length, "one row per checkpoint, no fork yet");
    const first = await timeline().getByRole("listitem").first().textContent();
    assert.match(first ?? "", /step \d+.*loop.*by review.*end/, "the newest checkpoint is at the top");
    await row("input", "next __start__").waitFor();
    await row("loop", "by write", "next review").waitFor();
    // Beside the graph, once the Studio has drawn it.
    await page.getByTestId("studio-node-write").waitFor();
    await screenshot(page, "time-travel-timeline");
  });

  test("opening the checkpoint after write shows its state and what runs next, marked on the graph", async () => {
    await row("by write", "next review").getByRole("button").first().click();
    await page.locator('[data-testid="studio-node-review"].studio-node-next').waitFor();
    await panel().getByText(written.checkpoint.checkpoint_id!).waitFor();
    await panel().getByRole("region", { name: "State values" }).getByText(WRITTEN).waitFor();
    const facts = await panel().getByRole("definition").allTextContents();
    assert.equal(facts[2], "messages", "write changed the messages only");
    assert.equal(facts[3], "review", "and review runs next");
    assert.equal(await row("by write", "next review").getByRole("button").first().getAttribute("aria-expanded"), "true");
  });

  test("invalid JSON is refused on the page and nothing is sent", async () => {
    const before = (await history()).length;
    await panel().getByRole("button", { name: "Edit state" }).click();
    const editor = panel().getByRole("textbox", { name: "State values (JSON)" });
    const original = await editor.inputValue();
    await editor.fill(`${original}\n,,, not json`);
    await panel().getByRole("button", { name: "Save" }).click();
    await panel().getByRole("alert").getByText("The state is not valid JSON").waitFor();
    assert.equal((await history()).length, before, "no checkpoint was written");
    await editor.fill(original);
  });

  test("an edit saved as node write forks a new checkpoint from it, drawn as a branch", async () => {
    const editor = panel().getByRole("textbox", { name: "State values (JSON)" });
    const values = JSON.parse(await editor.inputValue()) as Values;
    const answer = values.messages!.filter((message) => message.type === "ai").at(-1)!;
    answer.content = EDITED;
    await editor.fill(JSON.stringify(values, null, 2));
    await panel().getByRole("combobox", { name: "As node" }).selectOption("write");
    await screenshot(page, "time-travel-edit");
    await panel().getByRole("button", { name: "Save" }).click();

    await panel().getByRole("status").getByText("Saved as a new checkpoint forked from step").waitFor();
    const states = await history();
    const fork = states.find((state) => state.metadata?.source === "update")!;
    assert.ok(fork, "the save wrote a checkpoint of source update");
    forkId = fork.checkpoint.checkpoint_id!;
    assert.equal(fork.parent_checkpoint?.checkpoint_id, written.checkpoint.checkpoint_id, "forked from the edited one");
    assert.deepEqual(fork.next, ["review"]);
    assert.equal(lastText(fork), EDITED);

    // The fork is the thread's latest: the main line now goes through it, the first answer's branch hangs beside.
    await panel().getByText(forkId).waitFor();
    await panel().getByRole("region", { name: "State values" }).getByText(EDITED).waitFor();
    // The Studio's own state view beside the graph follows: the edit is the thread's latest state.
    await page.getByRole("region", { name: "State", exact: true }).getByText(EDITED).waitFor();
    await row("update", "edited", "next review").waitFor();
    const branch = row("Fork from step");
    await branch.getByText("1 checkpoint").waitFor();
    const rows = await timeline().getByRole("listitem").allTextContents();
    assert.match(rows[0] ?? "", /update.*edited.*next review/, "the fork is the newest, on top");
    await screenshot(page, "time-travel-fork");
  });

  test("Run from here goes on from the fork: review asks again, and the thread ends with the edited answer", async () => {
    await panel().getByRole("button", { name: "Run from here" }).click();
    const interrupt = page.getByRole("region", { name: "Interrupt" });
    await interrupt.getByText(QUESTION).waitFor();
    assert.deepEqual((await client.threads.getState(threadId)).next, ["review"], "the run stopped at review again");
    await interrupt.getByLabel("Your answer").fill("ok");
    await interrupt.getByRole("button", { name: "Resume" }).click();
    // The run's end reads the history again: the fork's line now ends with review's answer.
    await timeline().getByRole("listitem").first().filter({ hasText: "by review" }).waitFor();

    const state = await client.threads.getState(threadId);
    const texts = messagesOf(state).map((message) => message.content);
    assert.ok(texts.includes(EDITED), `the thread's state carries the edit: ${JSON.stringify(texts)}`);
    assert.ok(!texts.includes(WRITTEN), "and not the answer it replaced");
    assert.equal(texts.at(-1), "Reviewer said: ok");

    const top = timeline().getByRole("listitem").first();
    await top.getByRole("button").first().click();
    await panel().getByRole("region", { name: "State values" }).getByText(EDITED).waitFor();
    await panel().getByRole("region", { name: "State values" }).getByText("Reviewer said: ok").waitFor();
    // The first answer's branch (its review) is still there, as a fork from the edited checkpoint's step.
    await row("Fork from step").waitFor();
    await screenshot(page, "time-travel-after-run");
  });

  test("a fork can be made the main line, and back", async () => {
    await row("Fork from step").getByRole("button", { name: "Switch to this branch" }).click();
    await view.getByRole("button", { name: "Back to the latest" }).waitFor();
    const top = await timeline().getByRole("listitem").first().textContent();
    assert.match(top ?? "", /loop.*by review.*end/);
    await timeline().getByRole("listitem").first().getByRole("button").first().click();
    await panel().getByRole("region", { name: "State values" }).getByText(WRITTEN).waitFor();
    await view.getByRole("button", { name: "Back to the latest" }).click();
    await row("update", "edited").waitFor();
  });

  test("a long history comes a page at a time, and only the rows in view are drawn", async () => {
    const long = (await client.threads.create({ graphId: "studio" })).thread_id;
    for (let index = 0; index < 150; index++) {
      await client.threads.updateState(long, { values: { notes: [`note ${index}`] }, asNode: "review" });
    }
    const oldest = (await client.threads.getHistory(long, { limit: 1000 })).at(-1)!;
    await page.goto(`${cp.url}/#/deployments/${deployment.id}/studio?assistant=${assistantId}&thread=${long}`);
    await view.getByText("100 checkpoints").waitFor();
    const drawn = await timeline().getByRole("listitem").count();
    assert.ok(drawn > 0 && drawn < 60, `${drawn} of 100 rows drawn`);

    await view.getByRole("button", { name: "Load older checkpoints" }).click();
    await view.getByText("150 checkpoints").waitFor();
    assert.equal(await view.getByRole("button", { name: "Load older checkpoints" }).count(), 0, "nothing older is left");
    await view.locator(".tt-scroll").evaluate((list) => list.scrollTo(0, list.scrollHeight));
    await timeline()
      .getByRole("button", { name: new RegExp(`^step ${oldest.metadata?.step} `) })
      .waitFor();
  });

  test("all of it ran within the page's Content-Security-Policy", async () => {
    assert.deepEqual(violations(), []);
  });
});
