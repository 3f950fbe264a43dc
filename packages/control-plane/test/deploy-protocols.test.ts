import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { after, before, describe, test } from "node:test";
import { type ControlPlane, deployTarball, finalRevision, packFixture, startControlPlane } from "@berth/test-support";
import WebSocket from "ws";

// The agent server's other protocol surfaces (protocol v2 over a WebSocket, MCP, A2A) reached through a deployment's
// stable URL, that is through the router, as a client outside the platform would.

interface ProtocolFrame {
  type: "success" | "error" | "event";
  id?: number | null;
  result?: Record<string, unknown>;
  error?: string;
  message?: string;
  method?: string;
  seq?: number;
  params?: { namespace: string[]; data: Record<string, unknown> };
}

/** The frames a v2 socket received, and a way to await the first (already received or not) that matches. */
function framesOf(socket: WebSocket) {
  const frames: ProtocolFrame[] = [];
  const waiting: Array<{ matches: (frame: ProtocolFrame) => boolean; resolve: (frame: ProtocolFrame) => void }> = [];
  socket.on("message", (data) => {
    const frame = JSON.parse(data.toString()) as ProtocolFrame;
    frames.push(frame);
    for (const waiter of [...waiting]) {
      if (!waiter.matches(frame)) continue;
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve(frame);
    }
  });
  const ended = new Promise<never>((_, reject) =>
    socket.once("close", (code) => reject(new Error(`the socket closed (${code}); frames: ${JSON.stringify(frames)}`))),
  );
  ended.catch(() => {});
  return {
    frames,
    next(matches: (frame: ProtocolFrame) => boolean): Promise<ProtocolFrame> {
      const seen = frames.find(matches);
      if (seen) return Promise.resolve(seen);
      return Promise.race([new Promise<ProtocolFrame>((resolve) => waiting.push({ matches, resolve })), ended]);
    },
  };
}

/** The text of the last message in a state's values. */
function lastMessage(values: unknown): string | undefined {
  const messages = (values as { messages?: { content: unknown }[] }).messages ?? [];
  const content = messages.at(-1)?.content;
  return typeof content === "string" ? content : undefined;
}

describe("a deployment's protocol surfaces through its stable URL", () => {
  let cp: ControlPlane;
  let url: string;
  let key: Record<string, string>;

  before(async () => {
    cp = await startControlPlane({ listener: true });
    const { deployment, revisionId } = await deployTarball(cp.admin, "protocols", packFixture("deploy-app"));
    const revision = await finalRevision(cp.admin, deployment.id, revisionId);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const current = await cp.admin.get<{ source_config: { custom_url?: string | null } }>(`/v2/deployments/${deployment.id}`);
    url = current.body.source_config.custom_url!;
    assert.match(url, /\/d\/[0-9a-f-]{36}$/);
    key = { "x-api-key": cp.adminKey };
  });
  after(() => cp?.stop());

  /** The default assistant of the deployment's `agent` graph. */
  async function agentAssistantId(): Promise<string> {
    const response = await fetch(`${url}/assistants/search`, {
      method: "POST",
      headers: { ...key, "content-type": "application/json" },
      body: JSON.stringify({ graph_id: "agent" }),
    });
    assert.equal(response.status, 200);
    const [assistant] = (await response.json()) as { assistant_id: string }[];
    assert.ok(assistant, "the agent graph has its default assistant");
    return assistant.assistant_id;
  }

  test("protocol v2 over a WebSocket: subscribe, run.start in band, events until the root lifecycle completes", {
    timeout: 120_000,
  }, async () => {
    const threadId = randomUUID();
    const address = `${url.replace(/^http/, "ws")}/threads/${threadId}/stream/events`;
    const socket = new WebSocket(address, { headers: key });
    const received = framesOf(socket);
    await once(socket, "open");
    try {
      socket.send(JSON.stringify({ id: 1, method: "subscription.subscribe", params: { channels: ["values", "lifecycle"] } }));
      const subscribed = await received.next((frame) => frame.id === 1);
      assert.equal(subscribed.type, "success", JSON.stringify(subscribed));
      assert.ok(subscribed.result?.subscription_id, JSON.stringify(subscribed));

      socket.send(
        JSON.stringify({
          id: 2,
          method: "run.start",
          params: { assistant_id: "agent", input: { messages: [{ type: "human", content: "over the socket" }] } },
        }),
      );
      const started = await received.next((frame) => frame.id === 2);
      assert.equal(started.type, "success", JSON.stringify(started));
      assert.ok(started.result?.run_id, JSON.stringify(started));

      const completed = await received.next(
        (frame) =>
          frame.type === "event" &&
          frame.method === "lifecycle" &&
          frame.params?.namespace.length === 0 &&
          frame.params.data.event === "completed",
      );
      const events = received.frames.filter((frame) => frame.type === "event");
      assert.ok(
        events.every((frame) => frame.method === "values" || frame.method === "lifecycle"),
        "only the subscribed channels",
      );
      const seqs = events.map((frame) => frame.seq ?? 0);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
        "seq rises",
      );
      const values = events.filter((frame) => frame.method === "values" && frame.params?.namespace.length === 0);
      assert.equal(lastMessage(values.at(-1)?.params?.data), "hello: over the socket");
      assert.ok((completed.seq ?? 0) >= (values.at(-1)?.seq ?? 0));
    } finally {
      socket.close();
    }
  });

  test("a WebSocket without a key of the deployment's workspace is refused by the router", async () => {
    const address = `${url.replace(/^http/, "ws")}/threads/${randomUUID()}/stream/events`;
    const status = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(address);
      socket.on("open", () => reject(new Error("the handshake was accepted without a key")));
      socket.on("unexpected-response", (_request, response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      socket.on("error", (error) => {
        if (!/Unexpected server response/.test(error.message)) reject(error);
      });
    });
    assert.equal(status, 401);
  });

  test("MCP at <url>/mcp: initialize, and the graph's assistant is a tool", async () => {
    const call = (body: unknown) =>
      fetch(`${url}/mcp`, {
        method: "POST",
        headers: { ...key, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(body),
      });
    const initialized = await call({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "berth-test", version: "1" } },
    });
    assert.equal(initialized.status, 200);
    const init = (await initialized.json()) as {
      id: number;
      result: { protocolVersion: string; capabilities: { tools?: object }; serverInfo: { name: string } };
    };
    assert.equal(init.id, 1);
    assert.ok(init.result.protocolVersion);
    assert.ok(init.result.capabilities.tools);
    assert.ok(init.result.serverInfo.name);

    const listed = await call({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    assert.equal(listed.status, 200);
    const tools = ((await listed.json()) as { result: { tools: { name: string }[] } }).result.tools;
    assert.ok(
      tools.some((tool) => tool.name === "agent"),
      JSON.stringify(tools),
    );

    const anonymous = await fetch(`${url}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(anonymous.status, 401, "the router asks MCP clients for a key too");
  });

  test("A2A: the agent card read through the stable URL names the stable URL; message/send answers", {
    timeout: 120_000,
  }, async () => {
    const assistantId = await agentAssistantId();
    const cardResponse = await fetch(`${url}/.well-known/agent-card.json?assistant_id=${assistantId}`, { headers: key });
    assert.equal(cardResponse.status, 200);
    const card = (await cardResponse.json()) as { url: string; capabilities: { streaming: boolean }; skills: unknown[] };
    assert.equal(card.url, `${url}/a2a/${assistantId}`, "the card points clients at the deployment's stable URL");
    assert.ok(card.skills.length > 0);

    const sent = await fetch(card.url, {
      method: "POST",
      headers: { ...key, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "send-1",
        method: "message/send",
        params: {
          message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "over a2a" }] },
        },
      }),
    });
    assert.equal(sent.status, 200);
    const task = (await sent.json()) as {
      id: string;
      result: { status: { state: string }; artifacts?: { parts: { kind: string; text?: string }[] }[] };
    };
    assert.equal(task.id, "send-1");
    assert.equal(task.result.status.state, "completed", JSON.stringify(task));
    assert.equal(task.result.artifacts?.[0]?.parts[0]?.text, "hello: over a2a");
  });
});
