// The MCP endpoint: the official MCP client (`@modelcontextprotocol/sdk`) against /mcp, plus raw requests for the
// envelope rules, custom auth, `http.disable_mcp` and (on PostgreSQL + Redis) an API process whose worker is another.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { Client } from "@langchain/langgraph-sdk";
import { type BerthProcess, newDataDir, startBerth, TEST_BACKEND } from "@berth/test-support";
import { ANSWER } from "./fixtures/graphs/chat.js";

const MCP_ACCEPT = "application/json, text/event-stream";

/** An MCP client connected to the server's /mcp, sending `headers` with every request. */
async function connect(url: string, headers: Record<string, string> = {}): Promise<McpClient> {
  const client = new McpClient({ name: "berth-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

/** POSTs `body` (an object as JSON, a string as it is) to `path` the way MCP clients do, unless `headers` say otherwise. */
function post(url: string, body: unknown, headers: Record<string, string> = {}, path = "/mcp"): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: MCP_ACCEPT, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

interface JsonRpcAnswer {
  jsonrpc: string;
  id: string | number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

async function call(url: string, id: string | number, method: string, params?: object): Promise<JsonRpcAnswer> {
  const response = await post(url, { jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
  assert.equal(response.status, 200);
  return (await response.json()) as JsonRpcAnswer;
}

/** Asserts the MCP client call fails with JSON-RPC error `code`. */
const failsWithCode = (code: number, promise: Promise<unknown>, message?: RegExp) =>
  assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof McpError, String(error));
    assert.equal(error.code, code);
    if (message) assert.match(error.message, message);
    return true;
  });

type ToolCallResult = Awaited<ReturnType<McpClient["callTool"]>>;

/** The text of a tool result's one content part. */
const textOf = (result: ToolCallResult): string => {
  const [first] = result.content as { type: string; text: string }[];
  assert.equal(first?.type, "text");
  return first.text;
};

describe("MCP endpoint", { timeout: 300_000 }, () => {
  let berth: BerthProcess;
  let mcp: McpClient;

  before(async () => {
    berth = await startBerth({ project: "mcp" });
    await berth.client.assistants.create({ graphId: "plain_js", name: "shouter", description: "Shouts the text back" });
    mcp = await connect(berth.url);
  });
  after(async () => {
    await mcp?.close();
    await berth?.stop();
  });

  it("initializes: a tools server, and an official client is happy with it", () => {
    assert.equal(mcp.getServerVersion()?.name, "Berth");
    assert.deepEqual(mcp.getServerCapabilities()?.tools, { listChanged: false });
  });

  it("lists every assistant as a tool, with its description and its graph's input schema", async () => {
    const { tools, nextCursor } = await mcp.listTools();
    assert.equal(nextCursor, undefined);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    assert.deepEqual([...byName.keys()].sort(), ["chat", "failing", "plain_js", "shouter"]);
    const chat = byName.get("chat")!;
    assert.equal(chat.description, "Answers a conversation"); // graphs.chat.description in langgraph.json
    assert.equal(chat.inputSchema.type, "object");
    assert.ok(chat.inputSchema.properties?.messages, JSON.stringify(chat.inputSchema));
    assert.equal(byName.get("failing")!.description, "");
    assert.equal(byName.get("shouter")!.description, "Shouts the text back");
    assert.ok(byName.get("shouter")!.inputSchema.properties?.text);
  });

  it("calls a tool: a stateless run with the arguments as input, its output as JSON text", async () => {
    const result = await mcp.callTool({ name: "chat", arguments: { messages: [{ role: "user", content: "hi" }] } });
    assert.equal(result.isError, undefined);
    const output = JSON.parse(textOf(result)) as { messages: { type: string; content: string }[] };
    assert.deepEqual(
      output.messages.map((message) => [message.type, message.content]),
      [
        ["human", "hi"],
        ["ai", ANSWER],
        ["ai", "done"],
      ],
    );
  });

  it("calls a user-created assistant by its name", async () => {
    const result = await mcp.callTool({ name: "shouter", arguments: { text: "berth" } });
    assert.deepEqual(JSON.parse(textOf(result)), { text: "BERTH" });
  });

  it("a run that fails is a tool result with isError and the error's text", async () => {
    const result = await mcp.callTool({ name: "failing", arguments: { reason: "on purpose" } });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /CustomError: Boom: on purpose/);
  });

  it("an unknown tool, an ambiguous name or no name is -32602", async () => {
    await failsWithCode(-32602, mcp.callTool({ name: "nobody", arguments: {} }), /not found/);
    for (let copy = 0; copy < 2; copy++) await berth.client.assistants.create({ graphId: "plain_js", name: "twin" });
    await failsWithCode(-32602, mcp.callTool({ name: "twin", arguments: { text: "x" } }), /ambiguous/);
    const unnamed = await call(berth.url, 7, "tools/call", { arguments: {} });
    assert.equal(unnamed.id, 7);
    assert.equal(unnamed.error?.code, -32602);
  });

  it("every JSON-RPC error carries the request's id", async () => {
    for (const id of ["req-1", 41, 0]) {
      const unknownMethod = await call(berth.url, id, "resources/list");
      assert.deepEqual([unknownMethod.jsonrpc, unknownMethod.id, unknownMethod.error?.code], ["2.0", id, -32601]);
      const unknownTool = await call(berth.url, id, "tools/call", { name: "nobody" });
      assert.deepEqual([unknownTool.id, unknownTool.error?.code], [id, -32602]);
    }
  });

  it("initialize echoes a protocol version it speaks, and answers its newest to one it does not", async () => {
    const initialize = (protocolVersion: string) =>
      call(berth.url, 1, "initialize", { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "0" } });
    assert.equal((await initialize("2024-11-05")).result?.protocolVersion, "2024-11-05");
    const answered = (await initialize("1999-01-01")).result;
    assert.match(String(answered?.protocolVersion), /^\d{4}-\d{2}-\d{2}$/);
    assert.notEqual(answered?.protocolVersion, "1999-01-01");
    assert.deepEqual(answered?.capabilities, { tools: { listChanged: false } });
  });

  it("notifications and responses are accepted with 202 and no body", async () => {
    for (const message of [
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 5, result: {} },
    ]) {
      const response = await post(berth.url, message);
      assert.equal(response.status, 202, JSON.stringify(message));
      assert.equal(await response.text(), "");
    }
  });

  it("refuses a bad envelope with 400 {error}: not JSON, not JSON-RPC 2.0, a batch, an Accept without JSON", async () => {
    const refusals: [unknown, Record<string, string>?][] = [
      ["{not json"],
      [""],
      [{ id: 1, method: "tools/list" }],
      [{ jsonrpc: "1.0", id: 1, method: "tools/list" }],
      [[{ jsonrpc: "2.0", id: 1, method: "tools/list" }]],
      [{ jsonrpc: "2.0" }],
      [{ jsonrpc: "2.0", id: 1, method: "tools/list" }, { accept: "text/html" }],
    ];
    for (const [body, headers] of refusals) {
      const response = await post(berth.url, body, headers);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(typeof ((await response.json()) as { error?: unknown }).error, "string");
    }
    assert.deepEqual(await (await post(berth.url, "{not json")).json(), { error: "Invalid JSON" });
  });

  it("GET is 405 (no server stream), DELETE 404 (no sessions); /mcp/ is served as /mcp", async () => {
    const get = await fetch(`${berth.url}/mcp`, { headers: { accept: "text/event-stream" } });
    assert.equal(get.status, 405);
    assert.equal((await fetch(`${berth.url}/mcp`, { method: "DELETE" })).status, 404);
    const slashed = await post(berth.url, { jsonrpc: "2.0", id: "s", method: "tools/list" }, {}, "/mcp/");
    assert.equal(slashed.status, 200);
    assert.equal(((await slashed.json()) as JsonRpcAnswer).id, "s");
  });

  it("pages tools 100 at a time through nextCursor", async () => {
    const before = (await mcp.listTools()).tools.length;
    for (let n = before; n < 105; n++) await berth.client.assistants.create({ graphId: "plain_js", name: `paged-${n}` });
    const first = await mcp.listTools();
    assert.equal(first.tools.length, 100);
    assert.equal(first.nextCursor, "100");
    const second = await mcp.listTools({ cursor: first.nextCursor });
    assert.equal(second.tools.length, 5);
    assert.equal(second.nextCursor, undefined);
    const names = new Set([...first.tools, ...second.tools].map((tool) => tool.name));
    assert.equal(names.size, 104); // every assistant once; the two twins share a name
    const badCursor = await call(berth.url, "c", "tools/list", { cursor: "not-a-cursor" });
    assert.deepEqual([badCursor.id, badCursor.error?.code], ["c", -32602]);
  });
});

describe("MCP endpoint with custom auth", { timeout: 120_000 }, () => {
  let berth: BerthProcess;
  const as = (user: string) => ({ authorization: `Bearer user-${user}` });

  before(async () => {
    berth = await startBerth({ project: "mcp-auth" });
    for (const user of ["ann", "bob"]) {
      const client = new Client({ apiUrl: berth.url, defaultHeaders: as(user) });
      await client.assistants.create({ graphId: "whoami", name: `${user}-whoami` });
    }
  });
  after(() => berth?.stop());

  it("authenticates like the rest of the API: 401 without credentials, 403 for a refused user", async () => {
    const message = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const anonymous = await post(berth.url, message);
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get("www-authenticate") ?? "", /Bearer/);
    assert.equal((await post(berth.url, message, as("blocked"))).status, 403);
    await assert.rejects(connect(berth.url), (error: { code?: number }) => error.code === 401);
  });

  it("lists only the assistants the caller may read, and runs them as the caller", async () => {
    const ann = await connect(berth.url, as("ann"));
    try {
      const { tools } = await ann.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name),
        ["ann-whoami"],
      );
      const result = await ann.callTool({ name: "ann-whoami", arguments: {} });
      assert.equal((JSON.parse(textOf(result)) as { user_id: string }).user_id, "ann");
      // Another user's assistant is no tool of ann's.
      await failsWithCode(-32602, ann.callTool({ name: "bob-whoami", arguments: {} }));
    } finally {
      await ann.close();
    }
  });
});

describe("http.disable_mcp", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "mcp-off" });
  });
  after(() => berth?.stop());

  it("takes /mcp away: 404, and out of the OpenAPI document", async () => {
    const response = await post(berth.url, { jsonrpc: "2.0", id: 1, method: "initialize", params: {} });
    assert.equal(response.status, 404);
    const document = (await (await fetch(`${berth.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    assert.equal(document.paths["/mcp"], undefined);
  });
});

const scaleOut = TEST_BACKEND !== "postgres" ? "needs PostgreSQL + Redis (BERTH_TEST_BACKEND=postgres)" : false;

describe("MCP through an API process whose runs execute in a worker process", { skip: scaleOut, timeout: 120_000 }, () => {
  let api: BerthProcess;
  let worker: BerthProcess;
  before(async () => {
    const dataDir = newDataDir();
    [api, worker] = await Promise.all([
      startBerth({ project: "mcp", dataDir, role: "api" }),
      startBerth({ project: "mcp", dataDir, role: "worker" }),
    ]);
  });
  after(() => Promise.all([api?.stop(), worker?.stop()]));

  it("a tool call waits for the run the worker executes", async () => {
    const mcp = await connect(api.url);
    try {
      const result = await mcp.callTool({ name: "plain_js", arguments: { text: "far" } });
      assert.deepEqual(JSON.parse(textOf(result)), { text: "FAR" });
      const failed = await mcp.callTool({ name: "failing", arguments: {} });
      assert.equal(failed.isError, true);
    } finally {
      await mcp.close();
    }
  });
});
