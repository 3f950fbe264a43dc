// Runs in the SQLite pass only: its subject is the dashboard in a browser,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  api,
  type ControlPlane,
  createDeployment,
  type Deployment,
  externalImageBody,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";
import { launchChromium, newPage, recordPolicyViolations, screenshot } from "@berth/test-support/browser";
import type { Browser, Page } from "playwright-core";

const STEP_MS = 30_000;

/** A workspace's own server: it records every request it gets, and lets any page call it (the friendliest CORS). */
async function recordingServer(): Promise<{
  url: string;
  requests: { method: string; url: string; headers: IncomingHttpHeaders }[];
  server: Server;
}> {
  const requests: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers });
    request.resume();
    response.writeHead(request.method === "OPTIONS" ? 204 : 200, {
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE",
      "access-control-allow-headers": request.headers["access-control-request-headers"] ?? "*",
      "content-type": "application/json",
    });
    response.end(request.method === "OPTIONS" ? undefined : "[]");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}

/** The policy's directives: name → its sources. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(";")
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...sources]) => [name!, sources]),
  );
}

describe("the dashboard sends keys to the platform only, under a strict Content-Security-Policy", () => {
  let cp: ControlPlane;
  let routerOrigin: string;
  let tenantServer: Awaited<ReturnType<typeof recordingServer>>;
  let tenantId: string;
  let deployment: Deployment;
  let browser: Browser;
  let page: Page;
  /** Every request the page made, with the key it carried. */
  const sent: { url: string; apiKey?: string }[] = [];
  let violations: () => string[];

  before(async () => {
    cp = await startControlPlane({ listener: true });
    assert.ok(cp.routerUrl, "the embedded listener's router");
    routerOrigin = new URL(cp.routerUrl).origin;
    tenantServer = await recordingServer();
    // A hostile workspace: its external_image deployment's URL is its own server.
    tenantId = (await cp.createTenant(uniqueName("tenant"))).id;
    const tenantKey = await cp.createKey({ tenants: [tenantId] });
    deployment = await createDeployment(
      api(cp.url, tenantKey.key, tenantId),
      externalImageBody(uniqueName("lure"), { source_config: { custom_url: `${tenantServer.url}/agent` } }),
    );
    assert.equal(deployment.source_config.custom_url, `${tenantServer.url}/agent`);

    browser = await launchChromium();
    page = await newPage(browser, STEP_MS);
    violations = await recordPolicyViolations(page);
    page.on("request", (request) => sent.push({ url: request.url(), apiKey: request.headers()["x-api-key"] }));
  });
  after(async () => {
    await browser?.close();
    await cp?.stop();
    tenantServer?.server.close();
  });

  test("the page, its assets and dashboard.json carry the policy and the other headers; the page has no inline script", async () => {
    const index = await fetch(`${cp.url}/`);
    const html = await index.text();
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, html);
    for (const path of ["/", "/api-host/", `/${script}`, "/dashboard.json"]) {
      const response = await fetch(`${cp.url}${path}`);
      assert.equal(response.status, 200, path);
      const policy = response.headers.get("content-security-policy") ?? "";
      const parsed = directives(policy);
      assert.deepEqual(parsed.get("script-src"), ["'self'"], `${path}: ${policy}`);
      assert.deepEqual(parsed.get("default-src"), ["'none'"], policy);
      assert.deepEqual(parsed.get("frame-ancestors"), ["'none'"], policy);
      assert.deepEqual(parsed.get("object-src"), ["'none'"], policy);
      assert.deepEqual(parsed.get("base-uri"), ["'none'"], policy);
      assert.deepEqual(parsed.get("connect-src"), ["'self'", routerOrigin], policy);
      assert.doesNotMatch(policy, /unsafe-|data:|\*/, policy);
      assert.equal(response.headers.get("x-frame-options"), "DENY", path);
      assert.equal(response.headers.get("x-content-type-options"), "nosniff", path);
      assert.equal(response.headers.get("referrer-policy"), "no-referrer", path);
      assert.equal(response.headers.get("cross-origin-opener-policy"), "same-origin", path);
    }
    // Every script is a file of the control plane's: nothing inline for the policy to block.
    const scripts = html.match(/<script\b[^>]*>/g) ?? [];
    assert.ok(scripts.length > 0, html);
    for (const tag of scripts) assert.match(tag, /\ssrc="\.\/assets\//, tag);
    assert.doesNotMatch(html, /\son[a-z]+\s*=/i, "no inline event handler");
    // The routers the page may open deployments through: the control plane's own list, not a workspace's.
    assert.deepEqual(await (await fetch(`${cp.url}/dashboard.json`)).json(), { router_urls: [cp.routerUrl] });
  });

  test("an admin opening the Conversations of an external_image deployment sends the key to the router, never to the URL its workspace chose", async () => {
    await page.goto(`${cp.url}/`);
    await page.getByLabel("API key").fill(cp.adminKey);
    await page.getByLabel("Workspace (tenant id)").fill(tenantId);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: deployment.name }).waitFor();
    await page.goto(`${cp.url}/#/deployments/${deployment.id}/conversations`);
    const note = page.getByTestId("conversations-through-router");
    await note.waitFor();
    assert.match((await note.textContent()) ?? "", new RegExp(`through the router, at ${cp.routerUrl}/d/${deployment.id}`));
    // The router answers for the deployment (it serves no revision: the image cannot run on local compute).
    await page.getByText("Could not list the deployment's assistants").waitFor();
    await screenshot(page, "security-conversations-through-router");

    assert.deepEqual(
      tenantServer.requests.filter((request) => JSON.stringify(request.headers).includes(cp.adminKey)),
      [],
      "no request with the key reached the workspace's server",
    );
    assert.deepEqual(tenantServer.requests, [], "the page did not call the workspace's server at all");
    const keyed = sent.filter((request) => request.apiKey !== undefined);
    assert.ok(
      keyed.some((request) => request.url.startsWith(`${cp.routerUrl}/d/${deployment.id}/`)),
      JSON.stringify(keyed),
    );
    for (const request of keyed) {
      assert.ok([new URL(cp.url).origin, routerOrigin].includes(new URL(request.url).origin), request.url);
    }
  });

  test("the pages load and work with no policy violation", async () => {
    for (const hash of ["#/", `#/deployments/${deployment.id}`, "#/new", `#/deployments/${deployment.id}/conversations`]) {
      await page.goto(`${cp.url}/${hash}`);
      await page.getByRole("heading", { level: 1 }).first().waitFor();
    }
    await page.getByText("Could not list the deployment's assistants").waitFor();
    assert.deepEqual(violations(), []);
  });

  test("a script in the page could not send the key elsewhere either: the policy blocks the call and reports it", async () => {
    const outcome = await page.evaluate(
      (url) =>
        Promise.all([
          new Promise<string>((resolve) =>
            document.addEventListener("securitypolicyviolation", (event) => resolve(event.violatedDirective), { once: true }),
          ),
          fetch(url, { headers: { "x-api-key": "probe" } }).then(
            () => "sent",
            () => "blocked",
          ),
        ]),
      `${tenantServer.url}/agent/threads`,
    );
    assert.deepEqual(outcome, ["connect-src", "blocked"]);
    assert.deepEqual(tenantServer.requests, []);
  });
});
