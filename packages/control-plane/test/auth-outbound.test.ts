// The control plane calls OAuth providers and MCP servers on workspaces' behalf: unless its operator allows private
// addresses (BERTH_OUTBOUND_ALLOW_PRIVATE), a provider whose endpoints lead to loopback, private or link-local
// addresses is refused, and so is MCP discovery against such an address; a loopback "server" records that nothing
// reached it. A second control plane, allowed 127.0.0.1, accepts the same provider.
import assert from "node:assert/strict";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { type Api, api, assertError, type ControlPlane, startControlPlane, uniqueName } from "@berth/test-support";
import { LOOPBACK_PROVIDERS_ALLOWED } from "./helpers/oauth-provider.js";

/** A public address (TEST-NET-3) that is only configured, never called: literals need no DNS. */
const PUBLIC_TOKEN_URL = "https://203.0.113.5/token";
const REFUSED = /loopback, private or link-local address.*BERTH_OUTBOUND_ALLOW_PRIVATE/;

describe("Auth Service: provider and discovery requests refuse private addresses unless allowed", () => {
  let cp: ControlPlane;
  let allowing: ControlPlane;
  let workspace: Api;
  let trap: http.Server;
  let origin = "";
  const reached: string[] = [];

  before(async () => {
    trap = http.createServer((request, response) => {
      reached.push(`${request.method} ${request.url}`);
      response.writeHead(401, {
        "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource"`,
      });
      response.end();
    });
    trap.listen(0, "127.0.0.1");
    await once(trap, "listening");
    origin = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
    [cp, allowing] = await Promise.all([startControlPlane(), startControlPlane({ env: LOOPBACK_PROVIDERS_ALLOWED })]);
    const tenant = await cp.createTenant(uniqueName("outbound"));
    workspace = api(cp.url, (await cp.createKey({ tenants: [tenant.id] })).key);
  });
  after(async () => {
    await Promise.all([cp?.stop(), allowing?.stop()]);
    trap?.closeAllConnections();
    trap?.close();
  });

  const provider = (overrides: Record<string, unknown>) => ({
    provider_id: uniqueName("p"),
    name: "Internal",
    client_id: "client",
    client_secret: "secret",
    auth_url: "https://203.0.113.5/authorize",
    token_url: PUBLIC_TOKEN_URL,
    ...overrides,
  });

  test("a provider whose token or revocation endpoint is loopback, private or link-local is a 400 naming the field", async () => {
    const port = new URL(origin).port;
    for (const token_url of [
      `${origin}/token`,
      `http://localhost:${port}/token`,
      `http://[::1]:${port}/token`,
      `http://[::ffff:127.0.0.1]:${port}/token`,
      "http://169.254.169.254/latest/meta-data/",
      "https://10.0.0.8/token",
      "https://100.64.1.1/token",
      "http://0.0.0.0/token",
    ]) {
      assertError(await workspace.post("/v2/auth/providers", provider({ token_url })), 400, [/token_url/, REFUSED]);
    }
    assertError(await workspace.post("/v2/auth/providers", provider({ revocation_url: `${origin}/revoke` })), 400, [
      /revocation_url/,
      REFUSED,
    ]);

    // A provider on a public address is stored; changing its endpoints to a private one is refused alike.
    const created = await workspace.post<{ provider_id: string }>("/v2/auth/providers", provider({}));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const path = `/v2/auth/providers/${created.body.provider_id}`;
    assertError(await workspace.patch(path, { token_url: `${origin}/token` }), 400, [/token_url/, REFUSED]);
    assertError(await workspace.patch(path, { revocation_url: "http://192.168.1.1/revoke" }), 400, [/revocation_url/, REFUSED]);
    assert.equal((await workspace.get<{ token_url: string }>(path)).body.token_url, PUBLIC_TOKEN_URL);
    assert.deepEqual(reached, []);
  });

  test("MCP discovery against a loopback or link-local server is a 400, and nothing reaches it", async () => {
    const port = new URL(origin).port;
    for (const mcp_server_url of [`${origin}/mcp`, `http://localhost:${port}/mcp`, "https://169.254.169.254/mcp"]) {
      assertError(
        await workspace.post("/v2/auth/providers/mcp-discover", { provider_id: uniqueName("mcp"), name: "MCP", mcp_server_url }),
        400,
        [/MCP discovery/, REFUSED],
      );
    }
    assert.deepEqual(reached, []);
  });

  test("an operator's allowance lets the same provider and discovery through", async () => {
    const admin = allowing.admin;
    const created = await admin.post("/v2/auth/providers", provider({ token_url: `${origin}/token` }));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    // The trap answers discovery with nothing usable: refused for that, after it was reached.
    const discovered = await admin.post("/v2/auth/providers/mcp-discover", {
      provider_id: uniqueName("mcp"),
      name: "MCP",
      mcp_server_url: `${origin}/mcp`,
    });
    assert.equal(discovered.status, 400, JSON.stringify(discovered.body));
    assert.doesNotMatch(JSON.stringify(discovered.body), REFUSED);
    assert.ok(reached.includes("GET /mcp"), JSON.stringify(reached));
  });
});
