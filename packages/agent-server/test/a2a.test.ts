// The A2A endpoint: each assistant as an A2A agent (card, JSON-RPC at /a2a/{assistant_id}), driven with the official
// @a2a-js/sdk client (its v0.3 JSON-RPC transport) and raw fetch for the envelope's errors. A context is a thread, a
// task a run on it. On PostgreSQL + Redis the API and the worker run in separate processes.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { type Client as A2aClient, ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { type BerthProcess, newDataDir, startBerth, TEST_BACKEND } from "@berth/test-support";

const legacy = { legacyCompat: { enabled: true } };

/** The SDK's client of the agent whose card is at `cardUrl`, sending `headers` with every request. */
function a2aClient(cardUrl: string, headers: Record<string, string> = {}): Promise<A2aClient> {
  const fetchImpl: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), ...headers } });
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ ...legacy, fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ ...legacy, fetchImpl }),
  });
  return factory.createFromUrl(cardUrl, "");
}

function textPart(text: string) {
  return { content: { $case: "text" as const, value: text }, metadata: undefined, filename: "", mediaType: "" };
}

function dataPart(data: Record<string, unknown>) {
  return { content: { $case: "data" as const, value: data }, metadata: undefined, filename: "", mediaType: "" };
}

function message(parts: ReturnType<typeof textPart | typeof dataPart>[], ids: { contextId?: string; taskId?: string } = {}) {
  return {
    tenant: "",
    configuration: undefined,
    metadata: undefined,
    message: {
      messageId: randomUUID(),
      contextId: ids.contextId ?? "",
      taskId: ids.taskId ?? "",
      role: Role.ROLE_USER,
      parts,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
  };
}

function asTask(result: unknown): Task {
  const task = result as Task & { payload?: unknown };
  assert.ok(task.id && task.status, `expected a task, got ${JSON.stringify(result)}`);
  return task;
}

function textOf(parts: { content?: { $case: string; value: unknown } }[] | undefined): string {
  return (parts ?? []).map((part) => (part.content?.$case === "text" ? String(part.content.value) : "")).join("");
}

interface RpcAnswer {
  status: number;
  body: { jsonrpc?: string; id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } } | null;
}

/** One raw JSON-RPC POST. */
async function rpc(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RpcAnswer> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** The servers of the suite: one process on SQLite; an API and a worker process on PostgreSQL + Redis. */
async function startServers(project?: string, env?: Record<string, string>): Promise<BerthProcess[]> {
  if (TEST_BACKEND !== "postgres") return [await startBerth({ project, env })];
  const dataDir = newDataDir();
  return Promise.all([startBerth({ project, env, dataDir, role: "api" }), startBerth({ project, env, dataDir, role: "worker" })]);
}

describe("A2A", () => {
  let servers: BerthProcess[];
  let url: string;
  const ids: Record<string, string> = {};
  before(async () => {
    servers = await startServers();
    url = servers[0]!.url;
    for (const graphId of ["agent", "hitl", "slow", "failing", "chat"]) {
      const [assistant] = await servers[0]!.client.assistants.search({ graphId, limit: 1 });
      ids[graphId] = assistant!.assistant_id;
    }
  });
  after(() => Promise.all(servers.map((server) => server.stop())));

  const endpoint = (graph: string) => `${url}/a2a/${ids[graph]}`;

  it("serves the agent card at the well-known path and per assistant, its url the JSON-RPC endpoint", async () => {
    const paths = [
      `/.well-known/agent-card.json?assistant_id=${ids.agent}`,
      `/a2a/${ids.agent}`,
      `/a2a/${ids.agent}/.well-known/agent-card.json`,
      `/a2a/${ids.agent}/.well-known/agent.json`,
    ];
    for (const path of paths) {
      const response = await fetch(`${url}${path}`);
      assert.equal(response.status, 200, path);
      const card = (await response.json()) as Record<string, unknown> & { skills: Record<string, unknown>[] };
      assert.equal(card.url, endpoint("agent"));
      assert.equal(card.name, "agent");
      assert.equal(card.description, "agent assistant");
      assert.equal(card.preferredTransport, "JSONRPC");
      assert.deepEqual(card.capabilities, { streaming: true, pushNotifications: false, stateTransitionHistory: false });
      assert.deepEqual(card.defaultInputModes, ["application/json", "text/plain"]);
      assert.equal(card.skills.length, 1);
      assert.deepEqual(card.skills[0]!.tags, ["assistant", "langgraph"]);
      assert.deepEqual((card.skills[0]!.metadata as { inputSchema: { supportsA2A: boolean } }).inputSchema.supportsA2A, true);
    }
  });

  it("builds the card's url from the forwarded scheme, host and prefix a proxy sends", async () => {
    const response = await fetch(`${url}/a2a/${ids.agent}`, {
      headers: { "x-forwarded-proto": "https", "x-forwarded-host": "agents.example", "x-forwarded-prefix": "/d/my-agent" },
    });
    assert.equal(((await response.json()) as { url: string }).url, `https://agents.example/d/my-agent/a2a/${ids.agent}`);
  });

  it("refuses a card without assistant_id or of an unknown assistant with 400 -32602", async () => {
    for (const path of ["/.well-known/agent-card.json", `/a2a/${randomUUID()}`]) {
      const response = await fetch(`${url}${path}`);
      assert.equal(response.status, 400, path);
      assert.equal(((await response.json()) as { error: { code: number } }).error.code, -32602);
    }
  });

  it("message/send runs the assistant on a new context: a completed task, the reply in its artifact, the thread kept", async () => {
    const client = await a2aClient(`${endpoint("agent")}/.well-known/agent-card.json`);
    const task = asTask(await client.sendMessage(message([textPart("hello")])));
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.match(task.id, new RegExp(`^${task.contextId}:[0-9a-f-]{36}$`));
    assert.equal(task.artifacts.length, 1);
    assert.equal(task.artifacts[0]!.name, "Assistant Response");
    assert.equal(textOf(task.artifacts[0]!.parts), "Hello from fixture.env: hello");
    assert.deepEqual(
      task.history.map((entry) => [entry.role, textOf(entry.parts)]),
      [
        [Role.ROLE_USER, "hello"],
        [Role.ROLE_AGENT, "Hello from fixture.env: hello"],
      ],
    );
    const thread = await servers[0]!.client.threads.get(task.contextId);
    assert.equal(thread.status, "idle");

    const fetched = await client.getTask({ tenant: "", id: task.id, historyLength: undefined });
    assert.equal(fetched.id, task.id);
    assert.equal(fetched.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(fetched.history[0]!.parts), "hello");
    const trimmed = await client.getTask({ tenant: "", id: task.id, historyLength: 1 });
    assert.deepEqual(
      trimmed.history.map((entry) => textOf(entry.parts)),
      ["Hello from fixture.env: hello"],
    );
  });

  it("continues a context: the same thread, a new task, four messages", async () => {
    const client = await a2aClient(`${endpoint("agent")}/.well-known/agent-card.json`);
    const first = asTask(await client.sendMessage(message([textPart("one")])));
    const second = asTask(await client.sendMessage(message([textPart("two")], { contextId: first.contextId })));
    assert.equal(second.contextId, first.contextId);
    assert.notEqual(second.id, first.id);
    assert.equal(textOf(second.artifacts[0]!.parts), "Hello from fixture.env: two");
    const state = await servers[0]!.client.threads.getState<{ messages: { content: string }[] }>(first.contextId);
    assert.equal(state.values.messages.length, 4);
    // A task id is also found as a plain run id beside its context.
    const runId = second.id.split(":")[1]!;
    const answer = await rpc(endpoint("agent"), {
      jsonrpc: "2.0",
      id: 7,
      method: "tasks/get",
      params: { id: runId, contextId: first.contextId },
    });
    assert.equal(answer.body?.id, 7);
    assert.equal((answer.body?.result?.status as { state: string } | undefined)?.state, "completed");
  });

  it("message/stream: a submitted task, working updates carrying the tokens, then one final completed update", async () => {
    const client = await a2aClient(`${endpoint("chat")}/.well-known/agent-card.json`);
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(message([textPart("stream please")]))) events.push(event);
    const [first, ...rest] = events;
    assert.equal(first?.payload?.$case, "task");
    const submitted = first.payload.value as Task;
    assert.equal(submitted.status?.state, TaskState.TASK_STATE_SUBMITTED);
    const last = rest.at(-1)?.payload;
    assert.equal(last?.$case, "statusUpdate");
    assert.equal(last.value.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(last.value.taskId, submitted.id);
    assert.equal(textOf(last.value.status?.message?.parts), "done");
    const middle = rest.slice(0, -1);
    for (const event of middle) assert.ok(["statusUpdate", "artifactUpdate"].includes(event.payload?.$case ?? ""));
    const streamed = middle
      .map((event) => (event.payload?.$case === "statusUpdate" ? textOf(event.payload.value.status?.message?.parts) : ""))
      .join("");
    assert.ok(streamed.includes("Berth streams every token of this answer."), streamed);
  });

  it("a failing run is a failed task with the error", async () => {
    const client = await a2aClient(`${endpoint("failing")}/.well-known/agent-card.json`);
    const task = asTask(await client.sendMessage(message([dataPart({ reason: "on purpose" })])));
    assert.equal(task.status?.state, TaskState.TASK_STATE_FAILED);
    assert.match(textOf(task.status?.message?.parts), /^Error executing assistant: .*Boom: on purpose/);
    assert.equal(task.artifacts.length, 0);
  });

  it("an interrupt asks for input with an Interrupt artifact; the same task resumes with {resume}", async () => {
    const client = await a2aClient(`${endpoint("hitl")}/.well-known/agent-card.json`);
    const asked = asTask(await client.sendMessage(message([dataPart({ question: "ready?" })])));
    assert.equal(asked.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const artifact = asked.artifacts.find((entry) => entry.name === "Interrupt");
    assert.ok(artifact);
    const part = artifact.parts[0]!.content;
    assert.equal(part?.$case, "data");
    assert.deepEqual((part.value as { value: unknown }).value, { question: "ready?" });
    const resumed = asTask(
      await client.sendMessage(message([dataPart({ resume: "yes" })], { contextId: asked.contextId, taskId: asked.id })),
    );
    assert.equal(resumed.id, asked.id);
    assert.equal(resumed.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(JSON.parse(textOf(resumed.artifacts[0]!.parts)), { question: "ready?", answer: "yes!" });
    const fetched = await client.getTask({ tenant: "", id: asked.id, historyLength: undefined });
    assert.equal(fetched.status?.state, TaskState.TASK_STATE_COMPLETED);
    // Nothing waits for input any more.
    const again = await rpc(endpoint("hitl"), {
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: {
        message: {
          kind: "message",
          messageId: randomUUID(),
          role: "user",
          contextId: asked.contextId,
          taskId: asked.id,
          parts: [{ kind: "data", data: { resume: "no" } }],
        },
      },
    });
    assert.equal(again.body?.error?.code, -32602);
  });

  it("tasks/cancel cancels a running task; a finished one cannot be, an unknown one is not found", async () => {
    const client = await a2aClient(`${endpoint("slow")}/.well-known/agent-card.json`);
    const stream = client.sendMessageStream(message([dataPart({ steps: 3, delay_ms: 60_000 })]));
    const first = await stream.next();
    assert.equal(first.value?.payload?.$case, "task");
    const taskId = (first.value.payload.value as Task).id;
    const canceled = await client.cancelTask({ tenant: "", id: taskId, metadata: undefined });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    const events: StreamResponse[] = [];
    for await (const event of { [Symbol.asyncIterator]: () => stream }) events.push(event);
    const last = events.at(-1)?.payload;
    assert.equal(last?.$case, "statusUpdate");
    assert.equal(last.value.status?.state, TaskState.TASK_STATE_CANCELED);
    assert.equal(
      (await client.getTask({ tenant: "", id: taskId, historyLength: undefined })).status?.state,
      TaskState.TASK_STATE_CANCELED,
    );

    const done = asTask(
      await (await a2aClient(`${endpoint("agent")}/.well-known/agent-card.json`)).sendMessage(message([textPart("hi")])),
    );
    const notCancelable = await rpc(endpoint("agent"), {
      jsonrpc: "2.0",
      id: 2,
      method: "tasks/cancel",
      params: { id: done.id },
    });
    assert.equal(notCancelable.body?.error?.code, -32002);
    const unknown = await rpc(endpoint("agent"), {
      jsonrpc: "2.0",
      id: 3,
      method: "tasks/cancel",
      params: { id: `${randomUUID()}:${randomUUID()}` },
    });
    assert.equal(unknown.body?.error?.code, -32001);
    const unknownGet = await rpc(endpoint("agent"), { jsonrpc: "2.0", id: 4, method: "tasks/get", params: { id: "nope" } });
    assert.equal(unknownGet.body?.error?.code, -32001);
  });

  it("answers envelope errors: bad JSON and non-2.0 with 400, unknown methods and bad params with 200 errors", async () => {
    const badJson = await rpc(endpoint("agent"), "{not json");
    assert.equal(badJson.status, 400);
    assert.equal(badJson.body?.error?.code, -32700);
    const oldVersion = await rpc(endpoint("agent"), { jsonrpc: "1.0", id: 1, method: "message/send" });
    assert.equal(oldVersion.status, 400);
    assert.equal(oldVersion.body?.error?.code, -32600);
    const unknownMethod = await rpc(endpoint("agent"), { jsonrpc: "2.0", id: "x", method: "tasks/explode", params: {} });
    assert.equal(unknownMethod.status, 200);
    assert.deepEqual([unknownMethod.body?.id, unknownMethod.body?.error?.code], ["x", -32601]);
    const noParts = await rpc(endpoint("agent"), {
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: { message: { kind: "message", messageId: "m", role: "user", parts: [] } },
    });
    assert.deepEqual([noParts.status, noParts.body?.error?.code], [200, -32602]);
    const filePart = await rpc(endpoint("agent"), {
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: { message: { messageId: "m", role: "user", parts: [{ kind: "file", file: { uri: "https://x.test/a" } }] } },
    });
    assert.equal(filePart.body?.error?.code, -32005);
    const textToDataGraph = await rpc(endpoint("slow"), {
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: { message: { messageId: "m", role: "user", parts: [{ kind: "text", text: "hi" }] } },
    });
    assert.equal(textToDataGraph.body?.error?.code, -32602);
    const badHistory = await rpc(endpoint("agent"), {
      jsonrpc: "2.0",
      id: 1,
      method: "tasks/get",
      params: { id: `${randomUUID()}:${randomUUID()}`, historyLength: 11 },
    });
    assert.equal(badHistory.body?.error?.code, -32602);
    const unknownAssistant = await rpc(`${url}/a2a/${randomUUID()}`, {
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: { message: { messageId: "m", role: "user", parts: [{ kind: "text", text: "hi" }] } },
    });
    assert.deepEqual([unknownAssistant.status, unknownAssistant.body?.error?.code], [200, -32602]);
    const notification = await rpc(endpoint("agent"), { jsonrpc: "2.0", method: "message/send", params: {} });
    assert.equal(notification.status, 202);
    const deleted = await fetch(endpoint("agent"), { method: "DELETE" });
    assert.equal(deleted.status, 405);
  });

  it("message/stream needs an Accept that allows event streams", async () => {
    const refused = await rpc(endpoint("agent"), {
      jsonrpc: "2.0",
      id: 1,
      method: "message/stream",
      params: { message: { messageId: "m", role: "user", parts: [{ kind: "text", text: "hi" }] } },
    });
    assert.equal(refused.status, 400);
    assert.ok(refused.body?.error);
  });
});

describe("A2A under custom auth", () => {
  let servers: BerthProcess[];
  let url: string;
  const keys = { alice: "alice-key-0123456789", bob: "bob-key-0123456789ab" };
  const as = (user: keyof typeof keys) => ({ authorization: `Bearer ${keys[user]}` });
  before(async () => {
    servers = await startServers("owner-auth", {
      BERTH_AUTH_API_KEYS: JSON.stringify({ [keys.alice]: { identity: "alice" }, [keys.bob]: { identity: "bob" } }),
    });
    url = servers[0]!.url;
  });
  after(() => Promise.all(servers.map((server) => server.stop())));

  async function ownAssistant(user: keyof typeof keys): Promise<string> {
    const response = await fetch(`${url}/assistants`, {
      method: "POST",
      headers: { ...as(user), "content-type": "application/json" },
      body: JSON.stringify({ graph_id: "whoami" }),
    });
    return ((await response.json()) as { assistant_id: string }).assistant_id;
  }

  it("runs as the caller, and keeps one user's contexts and tasks from another", async () => {
    const [alices, bobs] = [await ownAssistant("alice"), await ownAssistant("bob")];
    assert.equal((await fetch(`${url}/a2a/${alices}`)).status, 401);
    const alice = await a2aClient(`${url}/a2a/${alices}`, as("alice"));
    const task = asTask(await alice.sendMessage(message([dataPart({})])));
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal((JSON.parse(textOf(task.artifacts[0]!.parts)) as { user_id: string }).user_id, "alice");

    // Bob sees neither alice's assistant nor her task, and cannot write to her context.
    const card = await fetch(`${url}/a2a/${alices}`, { headers: as("bob") });
    assert.equal(card.status, 400);
    const get = await rpc(
      `${url}/a2a/${bobs}`,
      { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: task.id } },
      as("bob"),
    );
    assert.equal(get.body?.error?.code, -32001);
    const cancel = await rpc(
      `${url}/a2a/${bobs}`,
      { jsonrpc: "2.0", id: 1, method: "tasks/cancel", params: { id: task.id } },
      as("bob"),
    );
    assert.equal(cancel.body?.error?.code, -32001);
    const intrude = await rpc(
      `${url}/a2a/${bobs}`,
      {
        jsonrpc: "2.0",
        id: 1,
        method: "message/send",
        params: { message: { messageId: "m", role: "user", contextId: task.contextId, parts: [{ kind: "data", data: {} }] } },
      },
      as("bob"),
    );
    assert.equal(intrude.body?.error?.code, -32602);
  });
});

describe("A2A switched off", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "a2a-off" });
  });
  after(() => berth.stop());

  it("http.disable_a2a leaves no card and no endpoint", async () => {
    const [assistant] = await berth.client.assistants.search({ graphId: "plain_js", limit: 1 });
    const id = assistant!.assistant_id;
    assert.equal((await fetch(`${berth.url}/.well-known/agent-card.json?assistant_id=${id}`)).status, 404);
    assert.equal((await fetch(`${berth.url}/a2a/${id}`)).status, 404);
    assert.equal(
      (await rpc(`${berth.url}/a2a/${id}`, { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "x" } })).status,
      404,
    );
  });
});
