// Runs in the SQLite pass only: its subject is the dashboard in a browser,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import {
  type ControlPlane,
  createDeployment,
  type Deployment,
  deployTarball,
  finalRevision,
  packFixture,
  projectFiles,
  startControlPlane,
  uploadSource,
} from "@berth/test-support";
import { type GitHost, startGitHost } from "@berth/test-support/git-host";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium, recordPolicyViolations, screenshot, signIn } from "@berth/test-support/browser";

/** This package's fixture projects. */
const FIXTURES = fileURLToPath(new URL("fixtures/", import.meta.url));
/** A build and a start, or a failed build: generous, since the machine may be busy. */
const DEPLOY_MS = 180_000;
/** Any other page condition; the metrics page reads every 10 s and the control plane scrapes every second. */
const STEP_MS = 60_000;
/** Runs made through the deployment's URL for the metrics page to count. */
const RUNS = 4;
const NAME = "deployment-page-with-a-long-name-that-would-wrap-in-a-column";

describe("the deployment page and the metrics page, in headless Chromium", () => {
  let cp: ControlPlane;
  let host: GitHost;
  /** The same project on a git host, deployed from its main branch: the list names its commit. */
  let fromGit: Deployment;
  let gitSha: string;
  let deployment: Deployment;
  let url: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let violations: () => string[];

  /** What the page last put on the clipboard (its Permissions-Policy turns off clipboard reads, so it is noted on write). */
  const copied = () => page.evaluate(() => (window as unknown as { berthCopied?: string }).berthCopied);

  before(async () => {
    host = await startGitHost();
    // The same project with A2A turned off: the page says so rather than give its addresses.
    const project = projectFiles(join(FIXTURES, "studio-app"));
    const config = { ...JSON.parse(project["langgraph.json"]!), http: { disable_a2a: true } };
    gitSha = host.createRepository("agent.git", { ...project, "langgraph.json": JSON.stringify(config) });
    cp = await startControlPlane({ listener: true, env: { BERTH_METRICS_INTERVAL_SECONDS: "1" } });
    const integration = await cp.admin.post<{ id: string }>("/v1/integrations/repo_host", {
      name: "loopback",
      kind: "git",
      base_url: host.url,
    });
    assert.equal(integration.status, 201, JSON.stringify(integration.body));
    fromGit = await createDeployment(cp.admin, {
      name: "from-git",
      source: "repo_host",
      source_config: { integration_id: integration.body.id, repo_url: `${host.url}/agent.git`, deployment_type: "dev" },
      source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
      secrets: [],
    });
    const deployed = await deployTarball(cp.admin, NAME, packFixture("studio-app", {}, FIXTURES));
    const [revision, gitRevision] = await Promise.all([
      finalRevision(cp.admin, deployed.deployment.id, deployed.revisionId),
      finalRevision(cp.admin, fromGit.id, fromGit.latest_revision_id!),
    ]);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    assert.equal(gitRevision.source_revision_config.repo_commit_sha, gitSha, gitRevision.status_message ?? undefined);
    deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${deployed.deployment.id}`)).body;
    url = deployment.source_config.custom_url!.replace(/\/+$/, "");

    browser = await launchChromium();
    context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      permissions: ["clipboard-read", "clipboard-write"],
      acceptDownloads: true,
    });
    page = await context.newPage();
    page.setDefaultTimeout(STEP_MS);
    violations = await recordPolicyViolations(page);
    await page.addInitScript(() => {
      const clipboard = navigator.clipboard;
      const write = clipboard.writeText.bind(clipboard);
      clipboard.writeText = (text: string) => {
        (window as unknown as { berthCopied?: string }).berthCopied = text;
        return write(text);
      };
    });
  });
  after(async () => {
    await browser?.close();
    await cp?.stop();
    await host?.close();
  });

  test("the list shows where the code came from, when it changed, and a long name on one line", async () => {
    await signIn(page, cp.url, cp.adminKey, cp.defaultTenantId);
    const row = page.getByRole("row").filter({ hasText: NAME });
    await row
      .getByRole("cell")
      .filter({ hasText: /^upload$/ })
      .waitFor();
    const when = row.locator("time");
    assert.match((await when.textContent()) ?? "", /just now|ago/, "a relative time");
    assert.ok(await when.getAttribute("title"), "the full date in its tooltip");

    const name = row.getByRole("link", { name: NAME });
    assert.equal(await name.getAttribute("title"), NAME, "the full name in the tooltip");
    const box = await name.evaluate((element) => {
      const style = getComputedStyle(element);
      return { whiteSpace: style.whiteSpace, overflow: style.textOverflow, lines: element.getClientRects().length };
    });
    assert.deepEqual(box, { whiteSpace: "nowrap", overflow: "ellipsis", lines: 1 });

    // A git deployment: repository@branch and the commit its revision built.
    const gitRow = page.getByRole("row").filter({ hasText: "from-git" });
    await gitRow.getByText("agent@main", { exact: true }).waitFor();
    assert.equal(await gitRow.getByTestId("commit-sha").textContent(), gitSha.slice(0, 7));
    await screenshot(page, "deployment-list");

    await gitRow.getByRole("link", { name: "from-git" }).click();
    await page.getByText("turned off by the project").waitFor();
    assert.equal(await page.getByText("http.disable_a2a").count(), 1, "A2A is off");
    assert.equal(await page.getByTestId("a2a-url").count(), 0);
    assert.match((await page.getByTestId("mcp-url").textContent()) ?? "", /\/mcp$/, "MCP is still served");
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Deployments" }).click();
    // One deployment serves the rest of the tests.
    assert.equal((await cp.admin.delete(`/v2/deployments/${fromGit.id}`)).status, 204);
  });

  test("the page copies its URL and ids, links the tools and the API docs, and has a favicon", async () => {
    await page.getByRole("link", { name: NAME }).click();
    await page.getByRole("heading", { name: NAME, level: 1 }).waitFor();

    await page.getByRole("button", { name: "Copy the URL" }).click();
    await page.getByRole("button", { name: "Copy the URL" }).getByText("Copied").waitFor();
    assert.equal(await copied(), url);
    await page.getByRole("button", { name: "Copy the deployment id" }).click();
    assert.equal(await copied(), deployment.id);
    const newest = page.locator("li[data-revision]").first();
    const revisionId = await newest.getAttribute("data-revision");
    await newest.getByRole("button", { name: /^Copy the id of revision/ }).click();
    assert.equal(await copied(), revisionId);
    await page.getByRole("button", { name: "Copy the MCP address" }).click();
    assert.equal(await copied(), `${url}/mcp`);

    const tools = page.getByRole("navigation", { name: "Deployment tools" });
    const hrefs = Object.fromEntries(
      await Promise.all(
        ["Studio", "Conversations", "Traces", "Metrics", "API docs"].map(async (label) => [
          label,
          await tools.getByRole("link", { name: label, exact: true }).getAttribute("href"),
        ]),
      ),
    );
    assert.deepEqual(hrefs, {
      Studio: `#/deployments/${deployment.id}/studio`,
      Conversations: `#/deployments/${deployment.id}/conversations`,
      Traces: `#/deployments/${deployment.id}/traces`,
      Metrics: `#/deployments/${deployment.id}/metrics`,
      "API docs": `${url}/docs`,
    });
    assert.equal(await page.getByTestId("api-docs").getAttribute("href"), `${url}/docs`);
    const docs = await fetch(`${url}/docs`, { headers: { "x-api-key": cp.adminKey } });
    assert.equal(docs.status, 200, "the agent server answers its API docs there");

    const icon = await page.locator('link[rel="icon"]').evaluate((link) => (link as HTMLLinkElement).href);
    assert.match(icon, /\/assets\/favicon-[\w-]+\.svg$/, "Vite bundled the favicon into assets/");
    const served = await fetch(icon);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get("content-type")?.split(";")[0], "image/svg+xml");
    assert.deepEqual(violations(), []);
    await page.getByRole("button", { name: "Copy the URL" }).getByText("Copy", { exact: true }).waitFor();
    await screenshot(page, "deployment-page");
  });

  test("a log pane searches its lines, opens to its full height and downloads as text", async () => {
    const server = page.locator('pre[data-log="deploy"]');
    await server.filter({ hasText: "listening" }).waitFor({ timeout: DEPLOY_MS });
    const pane = page.getByRole("region", { name: "Server log" });
    const total = (await server.textContent())!.split("\n").length;
    assert.ok(total > 1, "the server log has more than the line searched for");

    await pane.getByRole("searchbox", { name: "Search the server log" }).fill("LISTENING");
    await pane.getByText(/^\d+ of \d+ lines$/).waitFor();
    const kept = (await server.textContent())!.split("\n");
    assert.ok(kept.length < total, `the search kept ${kept.length} of ${total} lines`);
    for (const line of kept) assert.match(line, /listening/i);
    assert.ok((await server.locator("mark").count()) >= 1, "the matches are marked");
    assert.match((await server.locator("mark").first().textContent()) ?? "", /^listening$/i);

    const expand = pane.getByRole("button", { name: "Full height" });
    await expand.click();
    await pane.getByRole("button", { name: "Collapse", pressed: true }).waitFor();
    assert.equal(await server.evaluate((element) => getComputedStyle(element).maxHeight), "none");
    await screenshot(page, "deployment-logs-search");

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      pane.getByRole("button", { name: "Download the server log" }).click(),
    ]);
    assert.match(download.suggestedFilename(), /-server-log\.txt$/);
    const text = readFileSync((await download.path())!, "utf8");
    assert.ok(text.split("\n").length >= total, "the whole log, not only the lines searched");
    assert.match(text, /listening/);
    await pane.getByRole("searchbox", { name: "Search the server log" }).fill("");
    await pane.getByRole("button", { name: "Collapse" }).click();
    assert.deepEqual(violations(), [], "the Blob download breaks no policy");
  });

  test("the metrics page charts the runs made through the deployment's URL, over the last hour and day", async () => {
    for (let index = 0; index < RUNS; index++) {
      const response = await fetch(`${url}/runs/wait`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": cp.adminKey },
        body: JSON.stringify({ assistant_id: "pipeline", input: { topic: "metrics", count: index + 1 } }),
      });
      assert.equal(response.status, 200, await response.text());
    }
    await page.getByRole("navigation", { name: "Deployment tools" }).getByRole("link", { name: "Metrics" }).click();
    await page.getByRole("heading", { name: `Metrics of ${NAME}`, level: 1 }).waitFor();
    await page.getByRole("button", { name: "Last hour", pressed: true }).waitFor();
    const summary = page.getByTestId("metrics-summary");
    // The listener reports every second; the page reads every 10 s.
    await page.waitForFunction(
      (made) => Number(document.querySelector('[data-testid="metrics-summary"]')?.getAttribute("data-runs") ?? 0) >= made,
      RUNS,
      { timeout: 3 * STEP_MS },
    );
    assert.ok(Number(await summary.getAttribute("data-runs-points")) > 0, "the runs chart has points");
    await summary.getByText(/^\d+ runs in the last hour$/).waitFor();
    for (const chart of ["chart-runs", "chart-latency", "chart-errors", "chart-queue"])
      await page.getByTestId(chart).locator("canvas").waitFor();
    assert.ok(Number(await page.getByTestId("chart-latency").getAttribute("data-points")) > 0, "latency has points");
    await page.getByTestId("chart-latency").getByText("p95").first().waitFor();
    await screenshot(page, "metrics-hour");

    await page.getByRole("button", { name: "Last day" }).click();
    await page.getByRole("button", { name: "Last day", pressed: true }).waitFor();
    await summary.getByText(/^\d+ runs in the last day$/).waitFor();
    assert.ok(Number(await summary.getAttribute("data-runs")) >= RUNS, "the day counts the runs too");
    await screenshot(page, "metrics-day");
    assert.deepEqual(violations(), [], "uPlot's styles come from the bundled CSS");
  });

  test("a failed new revision leaves the page saying which revision still serves", async () => {
    const broken = packFixture("studio-app", { "langgraph.json": '{"graphs":{"studio":"./missing.ts:graph"}}' }, FIXTURES);
    const objectPath = await uploadSource(cp.admin, deployment.id, broken);
    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      source_revision_config: { source_tarball_path: objectPath },
    });
    assert.equal(patched.status, 200);
    const failed = await finalRevision(cp.admin, deployment.id, patched.body.latest_revision_id!);
    assert.match(failed.status, /_FAILED$/, `the broken upload ended ${failed.status}`);

    await page.goto(`${cp.url}/#/deployments/${deployment.id}`);
    const notice = page.getByTestId("still-serving");
    await notice.getByText("Still serving revision 2").waitFor({ timeout: DEPLOY_MS });
    await notice.getByText(new RegExp(`the latest, revision 3, ended ${failed.status}`)).waitFor();
    const serving = page.locator("li[data-revision]").filter({ has: page.getByText("serving", { exact: true }) });
    assert.match((await serving.textContent()) ?? "", /Revision 2/);
    await notice.getByRole("button", { name: "Show the logs of revision 3" }).click();
    await page.getByRole("heading", { name: /^Revision 3 / }).waitFor();
    await screenshot(page, "deployment-still-serving");
    assert.deepEqual(violations(), []);
  });
});
