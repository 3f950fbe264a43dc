import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, newDataDir, request, startBerth, TEST_BACKEND } from "@berth/test-support";
import { Client } from "@langchain/langgraph-sdk";
import WebSocket from "ws";
import { sseEvents } from "./helpers/sse.js";

/** A protocol v2 event as the wire carries it. */
interface ProtocolEvent {
  type: "event";
  event_id: string;
  seq: number;
  method: string;
  params: { namespace: string[]; timestamp: number; node?: string; data: Record<string, unknown> };
}

/** A command's reply on a WebSocket. */
interface ReplyFrame {
  type: "success" | "error";
  id: number | null;
  result?: Record<string, unknown>;
  error?: string;
  message?: string;
}

type Frame = ProtocolEvent | ReplyFrame;

const HUMAN_HI = { messages: [{ role: "user", content: "hi" }] };

function isRootEnd(event: ProtocolEvent): boolean {
  return (
    event.method === "lifecycle" &&
    event.params.namespace.length === 0 &&
    ["completed", "failed", "interrupted"].includes(String(event.params.data.event))
  );
}

/** A command's reply: the protocol's envelopes are loosely typed here, as a client reading JSON sees them. */
// biome-ignore lint/suspicious/noExplicitAny: the reply's shape is what the assertions check
type Reply = { status: number; body: any };

async function command(url: string, threadId: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return request(url, "POST", `/threads/${threadId}/commands`, body, headers);
}

/** Opens the thread's SSE event stream; `until` ends it. Resolves once the headers are in. */
async function openEvents(
  url: string,
  threadId: string,
  body: Record<string, unknown>,
  until: (event: ProtocolEvent, all: ProtocolEvent[]) => boolean,
  headers: Record<string, string> = {},
): Promise<{ status: number; events: Promise<ProtocolEvent[]> }> {
  const controller = new AbortController();
  const response = await fetch(`${url}/threads/${threadId}/stream/events`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  if (response.status !== 200 || !response.body) return { status: response.status, events: Promise.resolve([]) };
  const stream = response.body;
  const events = (async () => {
    const seen: ProtocolEvent[] = [];
    try {
      for await (const frame of sseEvents(stream)) {
        const event = frame.data as ProtocolEvent;
        assert.equal(frame.event, event.method, "the SSE event name is the method");
        assert.equal(frame.id, event.event_id, "the SSE id is the event id");
        seen.push(event);
        if (until(event, seen)) break;
      }
    } finally {
      controller.abort();
    }
    return seen;
  })();
  return { status: 200, events };
}

/** A raw WebSocket session: frames in order, and a way to wait for one. */
class Socket {
  readonly frames: Frame[] = [];
  private waiters: { match: (frame: Frame) => boolean; resolve: (frame: Frame) => void }[] = [];
  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Frame;
      this.frames.push(frame);
      this.waiters = this.waiters.filter((waiter) => {
        if (!waiter.match(frame)) return true;
        waiter.resolve(frame);
        return false;
      });
    });
  }

  static open(url: string, threadId: string, headers: Record<string, string> = {}): Promise<Socket> {
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}/threads/${threadId}/stream/events`, { headers });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new Socket(ws)));
      ws.once("unexpected-response", (_request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
      ws.once("error", reject);
    });
  }

  next(match: (frame: Frame) => boolean): Promise<Frame> {
    const seen = this.frames.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  async send(id: number, method: string, params?: Record<string, unknown>): Promise<ReplyFrame> {
    this.ws.send(JSON.stringify({ id, method, ...(params ? { params } : {}) }));
    return (await this.next((frame) => frame.type !== "event" && frame.id === id)) as ReplyFrame;
  }

  events(): ProtocolEvent[] {
    return this.frames.filter((frame): frame is ProtocolEvent => frame.type === "event");
  }

  close(): void {
    this.ws.close();
  }
}

/**
 * Two API processes on one database; on PostgreSQL + Redis the runs execute
 * in a third, worker-only process, on SQLite (one file shared by processes)
 * in whichever of the two claims them.
 */
async function topology(): Promise<BerthProcess[]> {
  const dataDir = newDataDir();
  if (TEST_BACKEND === "postgres") {
    return Promise.all([
      startBerth({ dataDir, role: "api" }),
      startBerth({ dataDir, role: "api" }),
      startBerth({ dataDir, role: "worker" }),
    ]);
  }
  const shared = { dataDir, env: { BERTH_SQLITE_SHARED: "1" } };
  return Promise.all([startBerth(shared), startBerth(shared)]);
}

describe(`protocol v2 across processes (${TEST_BACKEND})`, () => {
  let processes: BerthProcess[] = [];
  let apiA: BerthProcess;
  let apiB: BerthProcess;
  before(async () => {
    processes = await topology();
    [apiA, apiB] = processes;
  });
  after(async () => {
    await Promise.all(processes.map((process) => process.stop()));
  });

  for (const transport of ["sse", "websocket"] as const) {
    it(`the SDK's ThreadStream runs a graph over ${transport}`, async () => {
      const client = new Client({ apiUrl: apiA.url });
      const thread = client.threads.stream(randomUUID(), {
        assistantId: "agent",
        transport,
        webSocketFactory: (url) => new WebSocket(url) as unknown as globalThis.WebSocket,
      });
      try {
        await thread.run.start({ input: HUMAN_HI });
        const output = (await thread.output) as { messages: { type: string; content: string }[] };
        assert.equal(output.messages.length, 2);
        assert.equal(output.messages[1].type, "ai");
        assert.match(output.messages[1].content, /: hi$/);
        const state = await thread.state.get({ namespace: [] });
        assert.deepEqual((state.values as typeof output).messages.length, 2);
      } finally {
        await thread.close();
      }
    });

    it(`the SDK's ThreadStream answers an interrupt over ${transport}`, async () => {
      const client = new Client({ apiUrl: apiB.url });
      const thread = client.threads.stream(randomUUID(), {
        assistantId: "hitl",
        transport,
        webSocketFactory: (url) => new WebSocket(url) as unknown as globalThis.WebSocket,
      });
      try {
        const lifecycle = await thread.subscribe({ channels: ["lifecycle", "input"] });
        await thread.run.start({ input: { question: "Ship it?" } });
        let interruptId: string | undefined;
        for await (const event of lifecycle as unknown as AsyncIterable<ProtocolEvent>) {
          if (event.method === "input.requested") interruptId = String(event.params.data.interrupt_id);
          if (isRootEnd(event)) {
            assert.equal(event.params.data.event, "interrupted");
            break;
          }
        }
        assert.ok(interruptId, "input.requested names the interrupt");
        await thread.input.respond({ interrupt_id: interruptId, response: "yes" } as never);
        const state = await waitForValues(apiB, thread.threadId, (values) => values.answer === "yes!");
        assert.equal(state.answer, "yes!");
      } finally {
        await thread.close();
      }
    });
  }

  it("numbers events per thread across runs and replays exactly what follows since, on any API process", async () => {
    const threadId = randomUUID();
    const first = await openEvents(apiA.url, threadId, { channels: ["values", "updates", "messages", "lifecycle"] }, isRootEnd);
    assert.equal(first.status, 200);
    const started = await command(apiA.url, threadId, {
      id: 1,
      method: "run.start",
      params: { assistant_id: "agent", input: HUMAN_HI },
    });
    assert.equal(started.status, 200);
    assert.equal(started.body.type, "success");
    assert.match(String(started.body.result.run_id), /^[0-9a-f-]{36}$/);
    assert.equal(started.body.meta.thread_id, threadId);
    const run1 = await first.events;
    const seqs = run1.map((event) => event.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
      "seq rises",
    );
    assert.equal(new Set(seqs).size, seqs.length);
    assert.deepEqual(run1[0].params.data, { event: "running", graph_name: "agent" });
    const methods = new Set(run1.map((event) => event.method));
    assert.deepEqual([...methods].sort(), ["lifecycle", "messages", "updates", "values"]);
    const messageEvents = run1.filter((event) => event.method === "messages").map((event) => event.params.data.event);
    assert.equal(messageEvents[0], "message-start");
    assert.ok(messageEvents.includes("content-block-delta"));
    assert.equal(messageEvents.at(-1), "message-finish");
    assert.ok(run1.filter((event) => event.method === "updates").every((event) => typeof event.params.node === "string"));
    const lastValues = run1.filter((event) => event.method === "values").at(-1)!;
    assert.equal((lastValues.params.data.messages as unknown[]).length, 2);

    // A second run on the thread, started through the other API process: the seq goes on.
    const second = await openEvents(apiB.url, threadId, { channels: ["lifecycle"], since: run1.at(-1)!.seq }, isRootEnd);
    await command(apiB.url, threadId, { id: 2, method: "run.start", params: { assistant_id: "agent", input: HUMAN_HI } });
    const run2 = await second.events;
    assert.ok(run2[0].seq > run1.at(-1)!.seq, "the second run's events come after the first's");
    const state = await command(apiA.url, threadId, { id: 3, method: "state.get" });
    assert.equal(state.body.result.values.messages.length, 4);
    assert.match(String(state.body.result.checkpoint.id), /./);

    // Replay from the middle of the first run: exactly the events after it, in order.
    const middle = seqs[Math.floor(seqs.length / 2)];
    const everything = [...run1, ...run2].filter((event) => event.method === "lifecycle" || run1.includes(event));
    const replay = await openEvents(
      apiB.url,
      threadId,
      { channels: ["values", "updates", "messages", "lifecycle"], since: middle },
      (_event, all) => all.filter(isRootEnd).length === 2,
    );
    const replayed = await replay.events;
    assert.deepEqual(
      replayed.filter((event) => event.seq <= run1.at(-1)!.seq).map((event) => event.seq),
      seqs.filter((seq) => seq > middle),
    );
    assert.ok(replayed.every((event) => event.seq > middle));
    assert.ok(everything.length > 0);
  });

  it("filters by namespace and depth: namespaces [[]] with depth 0 is the root only", async () => {
    const threadId = randomUUID();
    const root = await openEvents(
      apiA.url,
      threadId,
      { channels: ["lifecycle", "values"], namespaces: [[]], depth: 0 },
      isRootEnd,
    );
    await command(apiA.url, threadId, { id: 1, method: "run.start", params: { assistant_id: "nested", input: {} } });
    const events = await root.events;
    assert.ok(events.length >= 2);
    assert.ok(events.every((event) => event.params.namespace.length === 0));
    const tree = await command(apiB.url, threadId, { id: 2, method: "agent.getTree" });
    assert.equal(tree.body.type, "success");
    assert.deepEqual(tree.body.result.tree.namespace, []);
    assert.equal(tree.body.result.tree.graph_name, "nested");
    assert.ok((tree.body.result.tree.children ?? []).length > 0, "the subgraphs seen are its children");
  });

  it("two WebSocket subscribers on different API processes get the same events", async () => {
    const threadId = randomUUID();
    const [one, two] = await Promise.all([Socket.open(apiA.url, threadId), Socket.open(apiB.url, threadId)]);
    try {
      for (const socket of [one, two]) {
        const ack = await socket.send(1, "subscription.subscribe", { channels: ["values", "lifecycle"] });
        assert.equal(ack.type, "success");
        assert.match(String((ack.result as Record<string, unknown>).subscription_id), /./);
        assert.equal((ack.result as Record<string, unknown>).replayed_events, 0);
      }
      const started = await one.send(2, "run.start", { assistant_id: "agent", input: HUMAN_HI });
      assert.equal(started.type, "success");
      await Promise.all([one, two].map((socket) => socket.next((frame) => frame.type === "event" && isRootEnd(frame))));
      const seen = (socket: Socket) => socket.events().map((event) => event.event_id);
      assert.deepEqual(seen(one), seen(two));
      assert.ok(one.events().every((event) => event.method === "values" || event.method === "lifecycle"));

      // A late subscription replays what the thread logged, after its ack.
      const late = await Socket.open(apiB.url, threadId);
      try {
        const ack = await late.send(1, "subscription.subscribe", { channels: ["lifecycle"] });
        const replayedCount = (ack.result as Record<string, unknown>).replayed_events as number;
        assert.ok(replayedCount >= 2);
        await late.next(() => late.events().length === replayedCount);
        assert.equal(late.frames.indexOf(ack), 0, "the ack precedes the replayed events");
        const unsubscribed = await late.send(2, "subscription.unsubscribe", {
          subscription_id: (ack.result as Record<string, unknown>).subscription_id,
        });
        assert.equal(unsubscribed.type, "success");
        const unknown = await late.send(3, "subscription.unsubscribe", { subscription_id: "nope" });
        assert.equal(unknown.type, "error");
        assert.equal(unknown.error, "no_such_subscription");
      } finally {
        late.close();
      }
    } finally {
      one.close();
      two.close();
    }
  });

  it("a WebSocket subscription joining a run in progress gets what it missed after its ack, then the rest, once each", async () => {
    const threadId = randomUUID();
    const first = await Socket.open(apiA.url, threadId);
    const late: Socket[] = [];
    try {
      const channels = ["custom", "lifecycle", "values"];
      assert.equal((await first.send(1, "subscription.subscribe", { channels })).type, "success");
      const started = await first.send(2, "run.start", { assistant_id: "slow", input: { steps: 6, delay_ms: 150 } });
      assert.equal(started.type, "success");
      const progressed = (n: number) => (frame: Frame) =>
        frame.type === "event" &&
        frame.method === "custom" &&
        (frame.params.data as { payload?: { progress?: number } }).payload?.progress === n;
      await first.next(progressed(2));
      // One on each API process: the run executes in one of them (or in a worker), so one reads it from memory or the
      // log, the other through the broker.
      late.push(...(await Promise.all([Socket.open(apiA.url, threadId), Socket.open(apiB.url, threadId)])));
      const acks = await Promise.all(late.map((socket) => socket.send(1, "subscription.subscribe", { channels })));
      await Promise.all([first, ...late].map((socket) => socket.next((frame) => frame.type === "event" && isRootEnd(frame))));
      const wire = (socket: Socket) =>
        socket.events().map((event) => `${event.seq} ${event.method} ${JSON.stringify(event.params.data)}`);
      for (const [index, socket] of late.entries()) {
        const ack = acks[index]!;
        assert.equal(ack.type, "success");
        assert.equal(socket.frames.indexOf(ack), 0, "the ack comes first");
        const replayed = ack.result!.replayed_events as number;
        assert.ok(replayed >= 3, `the run's start and two steps were replayed (${replayed})`);
        assert.deepEqual(wire(socket), wire(first), "every event of the run once, in order");
      }
    } finally {
      for (const socket of [first, ...late]) socket.close();
    }
  });

  it("answers bad frames and bad commands in the protocol's shape", async () => {
    const threadId = randomUUID();
    const socket = await Socket.open(apiA.url, threadId);
    try {
      socket.ws.send("not json");
      const bad = (await socket.next((frame) => frame.type === "error" && frame.id === null)) as ReplyFrame;
      assert.equal(bad.error, "invalid_argument");
      const channel = await socket.send(1, "subscription.subscribe", { channels: ["nope"] });
      assert.equal(channel.error, "invalid_argument");
      const unknown = await socket.send(2, "no.such.command");
      assert.equal(unknown.error, "unknown_command");
    } finally {
      socket.close();
    }
    const noAssistant = await command(apiA.url, threadId, { id: 1, method: "run.start", params: {} });
    assert.equal(noAssistant.status, 200);
    assert.equal(noAssistant.body.type, "error");
    assert.equal(noAssistant.body.id, 1);
    assert.equal(noAssistant.body.error, "invalid_argument");
    const unknownAssistant = await command(apiA.url, threadId, { id: 2, method: "run.start", params: { assistant_id: "nope" } });
    assert.equal(unknownAssistant.body.error, "invalid_argument");
    const missingThread = await command(apiA.url, randomUUID(), { id: 3, method: "state.get" });
    assert.equal(missingThread.status, 200);
    assert.equal(missingThread.body.type, "error");
    const noRun = await command(apiA.url, randomUUID(), {
      id: 4,
      method: "input.respond",
      params: { interrupt_id: "x", response: 1 },
    });
    assert.equal(noRun.body.error, "no_such_run");
    for (const body of [{ method: "state.get" }, { id: "one", method: "state.get" }, { id: 1 }, "nope"]) {
      const malformed = await command(apiA.url, threadId, body);
      assert.equal(malformed.status, 400, JSON.stringify(body));
      assert.ok(Array.isArray(malformed.body.detail));
    }
    const unknownKey = await fetch(`${apiA.url}/threads/${threadId}/stream/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ channels: ["values"], surprise: true }),
    });
    assert.equal(unknownKey.status, 400);
    const noChannels = await fetch(`${apiA.url}/threads/${threadId}/stream/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ channels: [] }),
    });
    assert.equal(noChannels.status, 400);
  });
});

describe("protocol v2 under custom auth", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth({ project: "protocol-auth" });
  });
  after(() => berth.stop());

  const as = (user: string) => ({ authorization: `Bearer user-${user}` });

  it("authorizes every command and every event stream for the request's user", async () => {
    const threadId = randomUUID();
    const started = await command(
      berth.url,
      threadId,
      { id: 1, method: "run.start", params: { assistant_id: "whoami", input: {} } },
      as("ann"),
    );
    assert.equal(started.body.type, "success");
    const own = await openEvents(berth.url, threadId, { channels: ["lifecycle"] }, isRootEnd, as("ann"));
    assert.equal(own.status, 200);
    assert.ok((await own.events).some(isRootEnd));

    assert.equal((await command(berth.url, threadId, { id: 2, method: "state.get" })).status, 401);
    const foreign = await command(berth.url, threadId, { id: 3, method: "state.get" }, as("bob"));
    assert.equal(foreign.status, 200);
    assert.equal(foreign.body.type, "error");
    const foreignRun = await command(
      berth.url,
      threadId,
      { id: 4, method: "run.start", params: { assistant_id: "whoami", input: {} } },
      as("bob"),
    );
    assert.equal(foreignRun.body.type, "error");
    const foreignEvents = await openEvents(berth.url, threadId, { channels: ["lifecycle"] }, () => true, as("bob"));
    assert.equal(foreignEvents.status, 404);
    await assert.rejects(Socket.open(berth.url, threadId), /HTTP 401/);
    const socket = await Socket.open(berth.url, threadId, as("bob"));
    try {
      const refused = await socket.send(1, "subscription.subscribe", { channels: ["lifecycle"] });
      assert.equal(refused.type, "error");
    } finally {
      socket.close();
    }
    const mine = await command(berth.url, threadId, { id: 5, method: "state.get" }, as("ann"));
    assert.equal(mine.body.type, "success");
    assert.equal(mine.body.result.values.user_id, "ann");
  });
});

/** Polls the thread's state (through the classic API) until `done` holds: the resumed run ends on the worker. */
async function waitForValues(
  berth: BerthProcess,
  threadId: string,
  done: (values: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  for (;;) {
    const joined = await request(berth.url, "GET", `/threads/${threadId}/runs?limit=1`);
    const [latest] = joined.body as { run_id: string; status: string }[];
    if (latest) await request(berth.url, "GET", `/threads/${threadId}/runs/${latest.run_id}/join`);
    const state = await request(berth.url, "GET", `/threads/${threadId}/state`);
    const values = (state.body as { values: Record<string, unknown> }).values;
    if (done(values)) return values;
  }
}
