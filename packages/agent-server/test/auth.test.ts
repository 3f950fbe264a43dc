// Authentication: the project's `authenticate` handler (auth.path, an Auth of @langchain/langgraph-sdk/auth) on every
// request but the public ones, its HTTPExceptions passed through, the user in the run's configurable; Studio's requests;
// auth.openapi; and the built-in schemes configured by environment (API keys, JWT with a shared secret).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { SignJWT } from "jose";
import { type BerthProcess, startBerth } from "@berth/test-support";

const as = (url: string, authorization?: string, extra: Record<string, string> = {}) =>
  new Client({ apiUrl: url, defaultHeaders: { ...(authorization ? { authorization } : {}), ...extra } });

interface Whoami {
  user_id: string | null;
  permissions: string[] | null;
  user: Record<string, unknown> | null;
}

describe("the project's authenticate handler", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "custom-auth" });
  });
  after(() => berth.stop());

  it("leaves /ok, /info and the API's docs open", async () => {
    for (const path of ["/ok", "/info", "/openapi.json"]) {
      assert.equal((await fetch(`${berth.url}${path}`)).status, 200, path);
    }
  });

  it("answers the handler's HTTPException: status, message as detail, and its headers", async () => {
    const anonymous = await fetch(`${berth.url}/assistants/search`, { method: "POST", body: "{}" });
    assert.equal(anonymous.status, 401);
    assert.deepEqual(await anonymous.json(), { detail: "Who are you?" });
    assert.equal(anonymous.headers.get("www-authenticate"), 'Bearer realm="berth-test"');
    const blocked = await fetch(`${berth.url}/threads`, {
      method: "POST",
      headers: { authorization: "Bearer user-blocked", "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(blocked.status, 403);
    assert.deepEqual(await blocked.json(), { detail: "You are blocked" });
  });

  it("an invalid body from an unauthenticated client is a 401, not a 422: authentication comes first", async () => {
    const response = await fetch(`${berth.url}/threads`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "[1]",
    });
    assert.equal(response.status, 401);
  });

  it("gives the graph the user: langgraph_auth_user, _user_id and _permissions, whatever the client put there", async () => {
    const client = as(berth.url, "Bearer user-alice");
    const values = (await client.runs.wait(null, "whoami", {
      input: {},
      config: { configurable: { langgraph_auth_user_id: "mallory", langgraph_auth_permissions: ["admin"] } },
    })) as unknown as Whoami;
    assert.equal(values.user_id, "alice");
    assert.deepEqual(values.permissions, ["threads:read"]);
    assert.equal(values.user?.identity, "alice");
    assert.equal(values.user?.team, "team-of-alice", "the handler's own fields reach the graph");
    assert.equal(values.user?.is_authenticated, true);
    assert.equal(values.user?.display_name, "alice");
    assert.equal(values.user?.method, "POST", "the handler got the request");
  });

  it("takes Studio's requests (x-auth-scheme: langsmith) as Studio's user", async () => {
    const client = as(berth.url, undefined, { "x-auth-scheme": "langsmith" });
    const values = (await client.runs.wait(null, "whoami", { input: {} })) as unknown as Whoami;
    assert.equal(values.user_id, "langgraph-studio-user");
  });

  it("declares auth.openapi's security schemes in /openapi.json", async () => {
    const document = (await (await fetch(`${berth.url}/openapi.json`)).json()) as {
      components: { securitySchemes: Record<string, unknown> };
      security: unknown[];
    };
    assert.deepEqual(document.components.securitySchemes, { BearerAuth: { type: "http", scheme: "bearer" } });
    assert.deepEqual(document.security, [{ BearerAuth: [] }]);
  });
});

describe("built-in schemes configured by environment", () => {
  const SECRET = "a-jwt-secret-for-the-tests-0123456789";
  const KEY = "alice-api-key-0123456789";
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({
      project: "custom-auth-free",
      env: {
        BERTH_AUTH_API_KEYS: JSON.stringify({ [KEY]: { identity: "alice", permissions: ["p1"] } }),
        BERTH_AUTH_JWT_SECRET: SECRET,
        BERTH_AUTH_JWT_ISSUER: "https://issuer.test",
        BERTH_AUTH_JWT_AUDIENCE: "berth",
      },
    });
  });
  after(() => berth.stop());

  const jwt = (claims: Record<string, unknown>, expires: string | number) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("https://issuer.test")
      .setAudience("berth")
      .setExpirationTime(expires)
      .sign(new TextEncoder().encode(SECRET));

  it("refuses a request without credentials, or with a key or token it does not know, with 401", async () => {
    const search = (authorization?: string) =>
      fetch(`${berth.url}/assistants/search`, { method: "POST", headers: authorization ? { authorization } : {}, body: "{}" });
    const none = await search();
    assert.equal(none.status, 401);
    assert.match(((await none.json()) as { detail: string }).detail, /Missing credentials/);
    assert.equal((await search("Bearer not-a-key-not-a-key")).status, 401);
    const expired = await search(`Bearer ${await jwt({ sub: "bob" }, Math.floor(Date.now() / 1000) - 120)}`);
    assert.equal(expired.status, 401);
    assert.match(((await expired.json()) as { detail: string }).detail, /Invalid token/);
  });

  it("an API key of the list, and a signed token, name their users for the graph", async () => {
    const byKey = (await as(berth.url, undefined, { "x-api-key": KEY }).runs.wait(null, "whoami", {
      input: {},
    })) as unknown as Whoami;
    assert.equal(byKey.user_id, "alice");
    assert.deepEqual(byKey.permissions, ["p1"]);
    const token = await jwt({ sub: "bob", scope: "read write" }, "5m");
    const byToken = (await as(berth.url, `Bearer ${token}`).runs.wait(null, "whoami", { input: {} })) as unknown as Whoami;
    assert.equal(byToken.user_id, "bob");
    assert.deepEqual(byToken.permissions, ["read", "write"]);
  });
});
