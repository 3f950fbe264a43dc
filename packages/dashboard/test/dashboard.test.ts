// Runs in the SQLite pass only: its subject is the dashboard in a browser,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { CONTROL_PLANE_FIXTURES, type ControlPlane, type Deployment, startControlPlane, uniqueName } from "@berth/test-support";
import type { Browser, Locator, Page } from "playwright-core";
import { launchChromium, newPage, recordPolicyViolations, screenshot } from "@berth/test-support/browser";

/** A build and a start of the fixture, or a redeploy: generous, since the machine may be busy. */
const DEPLOY_MS = 180_000;
/** Any other page condition. */
const STEP_MS = 30_000;
const SECRET_VALUE = "typed-in-the-dashboard";

describe("the dashboard in headless Chromium", () => {
  let cp: ControlPlane;
  let browser: Browser;
  let page: Page;
  let deploymentId: string;
  let violations: () => string[];
  const name = uniqueName("dash");

  /** The revisions on the deployment page, newest first. */
  const revisions = () => page.locator("li[data-revision]");
  /** Waits until the page lists `count` revisions and the newest one is DEPLOYED. */
  const newestDeployed = async (count: number): Promise<Locator> => {
    await revisions()
      .nth(count - 1)
      .waitFor({ timeout: DEPLOY_MS });
    const newest = revisions().first();
    await newest.getByText("DEPLOYED", { exact: true }).waitFor({ timeout: DEPLOY_MS });
    return newest;
  };

  before(async () => {
    cp = await startControlPlane({ listener: true });
    const index = await fetch(`${cp.url}/`);
    assert.equal(index.status, 200, `GET / answered ${index.status}: ${await index.text()} (build the dashboard: npm run build)`);
    browser = await launchChromium();
    page = await newPage(browser, STEP_MS);
    violations = await recordPolicyViolations(page);
  });
  after(async () => {
    await browser?.close();
    await cp?.stop();
  });

  test("the page and its assets are served without a key; unknown paths stay JSON 404s", async () => {
    const index = await fetch(`${cp.url}/`);
    assert.match(index.headers.get("content-type") ?? "", /^text\/html/);
    const html = await index.text();
    assert.match(html, /<div id="root">/);
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, html);
    const asset = await fetch(`${cp.url}/${script}`);
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get("content-type") ?? "", /^text\/javascript/);
    assert.equal((await fetch(`${cp.url}/api-host/`)).status, 200);
    for (const path of ["/assets/missing.js", "/assets/..%2Fpackage.json", "/nowhere"]) {
      const missing = await fetch(`${cp.url}${path}`);
      assert.equal(missing.status, 404, path);
      assert.ok(((await missing.json()) as { detail: string }).detail, path);
    }
    // The official deploy CLI's "View status" link for a local control plane leads to the deployment's page.
    const id = "0b0c7e6e-2d6b-4d8e-9d3c-6a1f0f0f0f0f";
    const status = await fetch(`${cp.url}/o/${cp.defaultTenantId}/host/deployments/${id}`, { redirect: "manual" });
    assert.equal(status.status, 302);
    assert.equal(new URL(status.headers.get("location")!, status.url).href, `${cp.url}/#/deployments/${id}`);
    // The API itself still wants a key.
    assert.equal((await fetch(`${cp.url}/v2/deployments`)).status, 401);
  });

  test("a refused key brings the key form back with the reason; a valid one, sent with Enter, opens the list", async () => {
    await page.goto(`${cp.url}/`);
    await page.getByLabel("API key").fill("berth_not_a_key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "refused the key" }).waitFor();
    await screenshot(page, "01-key-refused");

    await page.getByLabel("API key").fill(cp.adminKey);
    await page.getByLabel("Workspace (tenant id)").fill(cp.defaultTenantId);
    await page.getByLabel("Workspace (tenant id)").press("Enter");
    await page.getByRole("heading", { name: "Deployments", level: 1 }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem("berth.apiKey")), cp.adminKey);
    await screenshot(page, "02-signed-in");
  });

  test("a project folder uploaded from the page builds and reaches DEPLOYED, with its build and server logs", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "New deployment" }).click();
    const form = page.getByRole("form", { name: "From a folder" });
    await form.getByLabel("Project folder").setInputFiles(join(CONTROL_PLANE_FIXTURES, "deploy-app"));
    await form.getByText(/\d+ files packed/).waitFor();
    await form.getByLabel("Name", { exact: true }).fill(name);
    await screenshot(page, "03-new-from-folder");
    await form.getByRole("button", { name: "Deploy folder" }).click();
    await page.waitForURL(/#\/deployments\/[0-9a-f-]{36}$/);
    deploymentId = /deployments\/([0-9a-f-]{36})$/.exec(page.url())![1]!;

    const count = await revisions().count();
    await newestDeployed(Math.max(count, 1));
    await page.locator('pre[data-log="build"]', { hasText: /check|graph/i }).waitFor();
    await page.locator('pre[data-log="deploy"]', { hasText: "agent server listening" }).waitFor({ timeout: DEPLOY_MS });
    await page.getByRole("heading", { name: "Status history" }).waitFor();
    await screenshot(page, "04-deployed");

    const deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${deploymentId}`)).body;
    assert.equal(deployment.name, name);
    assert.equal(deployment.source, "internal_source");
    assert.ok(deployment.source_config.custom_url);
  });

  test("the first revision, which waited for the upload, is hidden until asked for, then shown greyed saying so", async () => {
    const timeline = page.getByRole("region", { name: "Revisions" });
    assert.equal(await revisions().count(), 1);
    const toggle = timeline.getByRole("button", { name: "Show 1 revision without source" });
    await toggle.click();
    await revisions().nth(1).waitFor();
    const waited = revisions().nth(1);
    await waited.getByText("SKIPPED", { exact: true }).waitFor();
    await waited.getByText(/^No source: waited for an upload, which came with revision 2/).waitFor();
    assert.equal(await waited.getAttribute("class"), "no-source");
    await screenshot(page, "04b-revision-without-source");
    await timeline.getByRole("button", { name: "Hide 1 revision without source" }).click();
    await revisions().nth(1).waitFor({ state: "detached" });
  });

  test("the deployment page shows its MCP and A2A addresses under its URL, and the MCP one answers", async () => {
    const url = (await cp.admin.get<Deployment>(`/v2/deployments/${deploymentId}`)).body.source_config.custom_url!;
    const mcp = page.getByTestId("mcp-url");
    assert.equal(await mcp.textContent(), `${url}/mcp`);
    assert.equal(
      await page.getByTestId("a2a-card-url").textContent(),
      `${url}/.well-known/agent-card.json?assistant_id=assistant id`,
    );
    assert.equal(await page.getByTestId("a2a-url").textContent(), `${url}/a2a/assistant id`);
    await screenshot(page, "04c-protocol-addresses");
    const initialized = await fetch((await mcp.textContent())!, {
      method: "POST",
      headers: { "x-api-key": cp.adminKey, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "dashboard-test", version: "1" } },
      }),
    });
    assert.equal(initialized.status, 200);
  });

  test("the list shows the deployment READY, its URL and its last revision DEPLOYED", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Deployments" }).click();
    const row = page.getByRole("row").filter({ hasText: name });
    await row.getByText("DEPLOYED", { exact: true }).waitFor();
    await row.getByText("READY", { exact: true }).waitFor();
    const url = (await cp.admin.get<Deployment>(`/v2/deployments/${deploymentId}`)).body.source_config.custom_url!;
    await row.getByText(url).waitFor();
    await screenshot(page, "05-list");
    await row.getByRole("link", { name }).click();
    await page.getByRole("heading", { name, level: 1 }).waitFor();
  });

  test("a secret typed into a masked field makes a new revision that runs with it; the page never shows it", async () => {
    await revisions().first().getByText("DEPLOYED", { exact: true }).waitFor();
    const before = await revisions().count();
    await page.getByRole("button", { name: "Add secret" }).click();
    await page.getByLabel("Name of new secret 1").fill("GREETING");
    const value = page.getByLabel("Value of new secret 1");
    assert.equal(await value.getAttribute("type"), "password");
    await value.fill(SECRET_VALUE);
    await screenshot(page, "06-secret-masked");
    await page.getByRole("button", { name: "Save secrets" }).click();
    await page.getByText("Secrets saved").waitFor();
    await newestDeployed(before + 1);
    // Stored, it is a name and an empty password field: the value is not on the page.
    assert.equal(await page.getByLabel("Value of GREETING").inputValue(), "");
    assert.ok(!(await page.content()).includes(SECRET_VALUE));
    await screenshot(page, "07-secret-saved");

    const deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${deploymentId}`)).body;
    assert.deepEqual(deployment.secrets, [{ name: "GREETING", value: "********" }]);
    const client = new Client({ apiUrl: deployment.source_config.custom_url!, apiKey: cp.adminKey });
    const output = (await client.runs.wait(null, "agent", { input: { messages: [{ type: "human", content: "hi" }] } })) as {
      messages: { content: string }[];
    };
    assert.equal(output.messages.at(-1)?.content, `${SECRET_VALUE}: hi`);
  });

  test("Redeploy on an earlier DEPLOYED revision rolls back to it, without a build", async () => {
    const before = await revisions().count();
    const redeploy = page.getByRole("button", { name: /^Redeploy revision/ }).first();
    const target = await page.locator("li[data-revision]", { has: redeploy }).getAttribute("data-revision");
    assert.ok(target);
    await redeploy.click();
    const newest = await newestDeployed(before + 1);
    // Its history starts with the reason it was made.
    await page
      .getByRole("region", { name: "Status history" })
      .getByText(/^Redeploy of revision/)
      .first()
      .waitFor();
    await screenshot(page, "08-rolled-back");
    const deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${deploymentId}`)).body;
    assert.equal(deployment.active_revision_id, await newest.getAttribute("data-revision"));
  });

  test("Conversations opens the deployment's conversation browser", async () => {
    await page.getByRole("link", { name: "Conversations", exact: true }).click();
    await page.waitForURL(new RegExp(`#/deployments/${deploymentId}/conversations$`));
    await page.getByTestId("conversation-browser").waitFor();
    await screenshot(page, "09-conversations");
  });

  test("Delete asks on the page first, then removes the deployment; Sign out forgets the key", async () => {
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name }).click();
    await page.getByRole("button", { name: "Delete deployment" }).click();
    const question = page.getByRole("alertdialog");
    await question.getByText(`Delete ${name}?`).waitFor();
    await screenshot(page, "10-delete-confirm");
    await question.getByRole("button", { name: `Yes, delete ${name}` }).click();
    await page.getByRole("heading", { name: "Deployments", level: 1 }).waitFor();
    await page.getByText("No deployments yet").waitFor();
    assert.equal((await cp.admin.get(`/v2/deployments/${deploymentId}`)).status, 404);

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API key").waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem("berth.apiKey")), null);
    // The upload, the log streams, the conversations: all within the page's Content-Security-Policy.
    assert.deepEqual(violations(), []);
  });
});

describe("the dashboard's git form and Interrupt, on a control plane without a listener", () => {
  let cp: ControlPlane;
  let browser: Browser;
  let page: Page;
  const repoUrl = "https://github.com/acme/agent";

  before(async () => {
    cp = await startControlPlane();
    await cp.addIntegration(cp.defaultTenantId, "acme-github", [`${repoUrl}#trunk`]);
    browser = await launchChromium();
    page = await newPage(browser, STEP_MS);
  });
  after(async () => {
    await browser?.close();
    await cp?.stop();
  });

  test("a repository of an integration becomes a repo_host deployment; its queued revision can be interrupted", async () => {
    await page.goto(`${cp.url}/#/new`);
    await page.getByLabel("API key").fill(cp.adminKey);
    await page.getByLabel("Workspace (tenant id)").fill(cp.defaultTenantId);
    await page.getByRole("button", { name: "Sign in" }).click();
    const form = page.getByRole("form", { name: "From a git repository" });
    await form.getByLabel("Integration").locator("option", { hasText: "acme-github" }).waitFor({ state: "attached" });
    // The integration's repositories are listed as the URL field's suggestions.
    await form.locator("datalist option", { hasText: "acme/agent" }).waitFor({ state: "attached" });
    await form.getByLabel("Repository URL").fill(repoUrl);
    // Choosing a known repository fills in its default branch and its name.
    assert.equal(await form.getByLabel("Branch").inputValue(), "trunk");
    assert.equal(await form.getByLabel("Name", { exact: true }).inputValue(), "agent");
    assert.equal(await form.getByLabel("Graph config path").inputValue(), "langgraph.json");
    await screenshot(page, "11-new-from-git");
    await form.getByRole("button", { name: "Deploy repository" }).click();
    await page.waitForURL(/#\/deployments\/[0-9a-f-]{36}$/);
    const id = /deployments\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
    await page.getByText(`${repoUrl}@trunk`).waitFor();
    const deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${id}`)).body;
    assert.equal(deployment.source, "repo_host");
    assert.equal(deployment.source_config.repo_url, repoUrl);
    assert.equal(deployment.source_revision_config.repo_ref, "trunk");

    // No listener picks the revision up: it waits, and Interrupt ends it.
    const newest = page.locator("li[data-revision]").first();
    await newest.getByRole("button", { name: /^Interrupt revision/ }).click();
    await newest.getByText("INTERRUPTED", { exact: true }).waitFor();
    assert.equal(await newest.getByRole("button", { name: /^Interrupt revision/ }).count(), 0);
    await screenshot(page, "12-interrupted");
  });
});
