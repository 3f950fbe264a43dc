// Runs in the SQLite pass only: its subject is the dashboard in a browser,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type ControlPlane, type Deployment, deployedTarball, packFixture, startControlPlane } from "@berth/test-support";
import { Client } from "@langchain/langgraph-sdk";
import type { Browser, Locator, Page } from "playwright-core";
import { launchChromium, newPage, recordPolicyViolations, screenshot, signIn } from "@berth/test-support/browser";

/** This package's fixture projects. */
const FIXTURES = fileURLToPath(new URL("fixtures/", import.meta.url));

/** What fixtures/studio-app's "studio" graph writes after researching (its studio.ts says the same). */
const WRITTEN = "Dear anonymous, a plain answer (notes: searched, summarized).";

/** Waits up to a minute per step: a build, a run, a trace arriving. */
const STEP_MS = 60_000;

/** The synthetic trace: a root, 99 chains under it, 100 LLM calls under each (10,000 spans). */
const CHAINS = 99;
const CALLS = 100;
const CALL_TOKENS = 5;

interface TracedRun {
  id: string;
  status: string;
  end_time: string | null;
}

/** A dotted-order segment as the langsmith client writes it: the start (to the microsecond) and the run id. */
const dotted = (startMs: number, id: string) => `${new Date(startMs).toISOString().replace(/[-:.]/g, "").slice(0, -1)}000Z${id}`;

/** The 10,000 runs of the synthetic trace, as POST /api/v1/runs/batch takes them (docs/tracing.md). */
function syntheticTrace(project: string) {
  const t0 = Date.parse("2026-05-01T12:00:00.000Z");
  const rootId = randomUUID();
  const run = (
    id: string,
    name: string,
    runType: string,
    startMs: number,
    ms: number,
    parent?: { id: string; order: string },
  ) => {
    const order = parent ? `${parent.order}.${dotted(startMs, id)}` : dotted(startMs, id);
    return {
      id,
      trace_id: rootId,
      parent_run_id: parent?.id ?? null,
      dotted_order: order,
      name,
      run_type: runType,
      start_time: new Date(startMs).toISOString(),
      end_time: new Date(startMs + ms).toISOString(),
      inputs: { name },
      outputs:
        runType === "llm"
          ? { text: `${name} done`, usage_metadata: { input_tokens: 3, output_tokens: 2, total_tokens: CALL_TOKENS } }
          : { done: true },
      session_name: project,
    };
  };
  const root = run(rootId, "synthetic-root", "chain", t0, CHAINS * 1000);
  const runs = [root];
  for (let chain = 0; chain < CHAINS; chain++) {
    const chainStart = t0 + chain * 1000;
    const step = run(randomUUID(), `step-${chain}`, "chain", chainStart, 950, { id: root.id, order: root.dotted_order });
    runs.push(step);
    for (let call = 0; call < CALLS; call++) {
      runs.push(
        run(randomUUID(), `call-${chain}-${call}`, "llm", chainStart + call * 9, 8, { id: step.id, order: step.dotted_order }),
      );
    }
  }
  return runs;
}

describe("the dashboard's traces, in headless Chromium", () => {
  let cp: ControlPlane;
  let deployment: Deployment;
  let browser: Browser;
  let page: Page;
  let violations: () => string[];
  let threadId: string;
  /** The agent server's run ids: the interrupted run (plan, research, write, review) and its resumption. */
  let firstRun: string;
  let resumedRun: string;

  /** The waterfall's row of the span of that name. */
  const spanRow = (name: string): Locator =>
    page.getByTestId("span-row").filter({ has: page.locator(".span-name", { hasText: new RegExp(`^${name}$`) }) });

  /** Waits (polling the read API: tracing is asynchronous) until the run's trace is in and ended. */
  async function traced(runId: string): Promise<TracedRun> {
    const deadline = Date.now() + STEP_MS;
    for (;;) {
      const response = await cp.admin.get<TracedRun>(`/api/v1/runs/${runId}`);
      if (response.status === 200 && response.body.end_time !== null) return response.body;
      assert.ok(Date.now() < deadline, `the trace of run ${runId} never arrived (last ${response.status})`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  before(async () => {
    cp = await startControlPlane({ listener: true });
    deployment = await deployedTarball(cp.admin, "traces", packFixture("studio-app", {}, FIXTURES));

    // A thread run as a developer would from code: researched and written, stopped at the review, resumed.
    const client = new Client({
      apiUrl: deployment.source_config.custom_url!,
      apiKey: cp.adminKey,
      defaultHeaders: { "x-tenant-id": cp.defaultTenantId },
    });
    const [assistant] = await client.assistants.search({ graphId: "studio", limit: 1 });
    threadId = (await client.threads.create()).thread_id;
    const first = await client.runs.create(threadId, assistant!.assistant_id, {
      input: { messages: [{ type: "human", content: "research this please" }] },
    });
    await client.runs.join(threadId, first.run_id);
    const resumed = await client.runs.create(threadId, assistant!.assistant_id, { command: { resume: "ship it" } });
    await client.runs.join(threadId, resumed.run_id);
    [firstRun, resumedRun] = [first.run_id, resumed.run_id];
    await Promise.all([traced(firstRun), traced(resumedRun)]);

    const feedback = await cp.admin.call("POST", "/api/v1/feedback", {
      run_id: firstRun,
      key: "helpfulness",
      score: 0.8,
      comment: "Clear, could cite its notes",
    });
    assert.equal(feedback.status, 200, JSON.stringify(feedback.body));

    browser = await launchChromium();
    page = await newPage(browser, STEP_MS);
    violations = await recordPolicyViolations(page);
    await signIn(page, cp.url, cp.adminKey, cp.defaultTenantId);
  });
  after(async () => {
    await browser?.close();
    await cp?.stop();
  });

  test("the traces list shows the deployment's runs, newest first, and filters them", async () => {
    await page.goto(`${cp.url}/#/deployments/${deployment.id}/traces`);
    await page.getByRole("heading", { name: `Traces of ${deployment.name}` }).waitFor();
    const rows = page.getByTestId("trace-row");
    await rows.nth(1).waitFor();
    assert.equal(await rows.count(), 2, "one trace per run");
    const links = await rows.getByRole("link").evaluateAll((anchors) => anchors.map((a) => a.getAttribute("href")));
    assert.deepEqual(
      links,
      [resumedRun, firstRun].map((run) => `#/deployments/${deployment.id}/traces/${run}`),
    );
    assert.match((await rows.first().textContent()) ?? "", /success/);
    await screenshot(page, "traces-list");

    await page.getByLabel("Errors only").check();
    await page.getByText("No trace matches these filters.").waitFor();
    assert.equal(await rows.count(), 0);
    await page.getByLabel("Errors only").uncheck();
    await page.getByLabel("Status").selectOption("success");
    await rows.nth(1).waitFor();
    await page.getByLabel("Minimum latency (s)").fill("3600");
    await page.getByText("No trace matches these filters.").waitFor();
    await page.getByLabel("Minimum latency (s)").fill("");
    await rows.nth(1).waitFor();
  });

  test("a trace opens as a waterfall of the graph's nodes, with its totals and feedback", async () => {
    await page.getByTestId("trace-row").nth(1).getByRole("link").click();
    assert.match(page.url(), new RegExp(`#/deployments/${deployment.id}/traces/${firstRun}$`));
    const header = page.getByTestId("trace-header");
    await header.waitFor();
    for (const node of ["plan", "research", "search", "summarize", "write", "review"]) await spanRow(node).waitFor();
    // The subgraph's nodes are indented under it.
    const level = (name: string) => spanRow(name).getAttribute("aria-level");
    assert.ok(Number(await level("search")) > Number(await level("research")), "search is under research");
    assert.equal(await page.getByTestId("span-row").first().getAttribute("aria-level"), "1", "the root first");
    assert.match((await header.getByTestId("trace-span-count").textContent()) ?? "", /^\d+$/);
    assert.match((await header.getByTestId("trace-latency").textContent()) ?? "", /\d+(\.\d+)? (ms|s)/);
    const feedback = header.getByTestId("trace-feedback");
    await feedback.getByText("helpfulness").waitFor();
    await feedback.getByText("score 0.8").waitFor();
    await feedback.getByText("Clear, could cite its notes").waitFor();
    const studio = header.getByRole("link", { name: "Open the thread in the Studio" });
    assert.equal(await studio.getAttribute("href"), `#/deployments/${deployment.id}/studio?thread=${threadId}`);
    await screenshot(page, "trace-waterfall");

    // Collapsing the subgraph hides its nodes; expanding shows them again.
    await spanRow("research").getByRole("button", { name: "Collapse research" }).click();
    await spanRow("search").waitFor({ state: "detached" });
    await spanRow("research").getByRole("button", { name: "Expand research" }).click();
    await spanRow("search").waitFor();
  });

  test("a span opens with its inputs and outputs, as text", async () => {
    await spanRow("write").click();
    const panel = page.getByTestId("span-panel");
    await panel.getByRole("heading", { name: /write/ }).waitFor();
    await panel.getByTestId("span-outputs").getByText(WRITTEN, { exact: false }).waitFor();
    assert.match((await panel.getByTestId("span-inputs").textContent()) ?? "", /research this please/);
    assert.match((await panel.getByTestId("span-metadata").textContent()) ?? "", /"langgraph_node": "write"/);
    await screenshot(page, "trace-span");
    await panel.getByRole("button", { name: "Close the span" }).click();
    await panel.waitFor({ state: "detached" });
  });

  test("the breadcrumb leads back to the list; a run without a trace says so", async () => {
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Traces", exact: true }).click();
    await page.getByTestId("trace-row").first().waitFor();
    await page.goto(`${cp.url}/#/deployments/${deployment.id}/traces/${randomUUID()}`);
    await page.getByText("No trace for this run (yet).").waitFor();
  });

  test("a trace of 10,000 spans: read page by page, the waterfall keeps only the rows in view", async () => {
    const runs = syntheticTrace(deployment.name);
    for (let index = 0; index < runs.length; index += 1000) {
      const response = await cp.admin.call("POST", "/api/v1/runs/batch", { post: runs.slice(index, index + 1000) });
      assert.equal(response.status, 202, JSON.stringify(response.body));
    }
    await page.goto(`${cp.url}/#/deployments/${deployment.id}/traces/${runs[0]!.id}`);
    const header = page.getByTestId("trace-header");
    await header.getByTestId("trace-span-count").getByText("10,000", { exact: true }).waitFor();
    assert.equal(await header.getByTestId("trace-tokens").textContent(), (CHAINS * CALLS * CALL_TOKENS).toLocaleString("en-US"));
    await spanRow("synthetic-root").waitFor();
    const rendered = await page.getByTestId("span-row").count();
    assert.ok(rendered > 10 && rendered < 100, `only the rows in view are in the page (${rendered})`);

    await page.getByTestId("waterfall-scroll").evaluate((element) => {
      element.scrollTop = element.scrollHeight;
    });
    const last = `call-${CHAINS - 1}-${CALLS - 1}`;
    await spanRow(last).waitFor();
    assert.ok((await page.getByTestId("span-row").count()) < 100, "still only the rows in view");
    await spanRow(last).click();
    await page.getByTestId("span-panel").getByTestId("span-tokens").getByText("3 prompt · 2 completion · 5 total").waitFor();
    await page.getByTestId("waterfall-scroll").evaluate((element) => {
      element.scrollTop = element.scrollHeight / 2;
    });
    await spanRow("call-49-50").waitFor();
    await screenshot(page, "trace-10000-spans");
  });

  test("a trace still running fills in as its spans arrive", async () => {
    const rootId = randomUUID();
    const childId = randomUUID();
    const start = Date.now();
    const root = {
      id: rootId,
      trace_id: rootId,
      dotted_order: dotted(start, rootId),
      name: "live-root",
      run_type: "chain",
      start_time: new Date(start).toISOString(),
      inputs: { question: "still thinking?" },
      session_name: deployment.name,
    };
    const batch = (body: unknown) => cp.admin.call("POST", "/api/v1/runs/batch", body);
    assert.equal((await batch({ post: [root] })).status, 202);
    await page.goto(`${cp.url}/#/deployments/${deployment.id}/traces/${rootId}`);
    const header = page.getByTestId("trace-header");
    await header.getByText("still running").waitFor();
    await spanRow("live-root").waitFor();

    const child = {
      id: childId,
      trace_id: rootId,
      parent_run_id: rootId,
      dotted_order: `${root.dotted_order}.${dotted(start + 5, childId)}`,
      name: "late-step",
      run_type: "tool",
      start_time: new Date(start + 5).toISOString(),
      end_time: new Date(start + 25).toISOString(),
      inputs: {},
      outputs: { answer: 42 },
      session_name: deployment.name,
    };
    const ended = { id: rootId, trace_id: rootId, end_time: new Date(start + 40).toISOString(), outputs: { answer: 42 } };
    assert.equal((await batch({ post: [child], patch: [ended] })).status, 202);
    await spanRow("late-step").waitFor();
    await header.getByTestId("trace-latency").getByText("40 ms").waitFor();
  });

  test("no page broke the content security policy", () => {
    assert.deepEqual(violations(), []);
  });
});
