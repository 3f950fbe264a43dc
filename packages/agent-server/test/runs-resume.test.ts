import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, startBerth } from "@berth/test-support";

/** One Server-Sent Event as received, with the client-side time it was parsed. */
interface SseEvent {
  kind: "event";
  id: string | undefined;
  event: string;
  data: unknown;
  at: number;
}

/** A `: comment` line (heartbeats), with the client-side time it was parsed. */
interface SseComment {
  kind: "comment";
  text: string;
  at: number;
}

type SseFrame = SseEvent | SseComment;

/** Parses an SSE body frame by frame, as it arrives. */
async function* sseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buffer = "";
  // The chunks of a frame not ended yet: an event of several MB arrives in many chunks, joined once it is whole.
  const pending: string[] = [];
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    const text = decoder.decode(chunk, { stream: true }).replace(/\r\n/g, "\n");
    const last = pending.at(-1) ?? buffer;
    if (!`${last.slice(-1)}${text}`.includes("\n\n")) {
      pending.push(text);
      continue;
    }
    buffer = [buffer, ...pending.splice(0), text].join("");
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const at = Date.now();
      let event: string | undefined;
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) {
          yield { kind: "comment", text: line.slice(1).trim(), at };
          continue;
        }
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = value;
        else if (field === "id") id = value;
        else if (field === "data") data.push(value);
      }
      if (event !== undefined || data.length > 0) {
        yield { kind: "event", id, event: event ?? "message", data: data.length ? JSON.parse(data.join("\n")) : null, at };
      }
    }
  }
}

interface OpenedStream {
  response: Response;
  frames: AsyncGenerator<SseFrame>;
  abort(): void;
}

async function openStream(url: string, init: RequestInit = {}): Promise<OpenedStream> {
  const controller = new AbortController();
  const response = await fetch(url, { ...init, signal: controller.signal });
  assert.equal(response.status, 200, `stream ${url} answered ${response.status}`);
  assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
  return { response, frames: sseFrames(response.body!), abort: () => controller.abort() };
}

/** Every frame until the server ends the response, and when it ended (client clock). */
async function collect(
  frames: AsyncGenerator<SseFrame>,
): Promise<{ events: SseEvent[]; comments: SseComment[]; endedAt: number }> {
  const events: SseEvent[] = [];
  const comments: SseComment[] = [];
  for await (const frame of frames) (frame.kind === "event" ? events : comments).push(frame as never);
  return { events, comments, endedAt: Date.now() };
}

/** Reads events until `count` of them arrived; leaves the stream open. */
async function take(frames: AsyncGenerator<SseFrame>, count: number): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  while (events.length < count) {
    const next = await frames.next();
    assert.ok(!next.done, `the stream ended after ${events.length} events, expected ${count}`);
    if (next.value.kind === "event") events.push(next.value);
  }
  return events;
}

/** Reads events until `predicate` holds for one of them; returns all events read so far. */
async function takeUntil(frames: AsyncGenerator<SseFrame>, predicate: (event: SseEvent) => boolean): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for (;;) {
    const next = await frames.next();
    assert.ok(!next.done, "the stream ended before the awaited event");
    if (next.value.kind !== "event") continue;
    events.push(next.value);
    if (predicate(next.value)) return events;
  }
}

const wire = (events: { id?: string; event: string; data: unknown }[]) =>
  events.map(({ id, event, data }) => ({ id, event, data }));

const isCustom = (n: number) => (event: SseEvent) =>
  event.event === "custom" && (event.data as { progress: number }).progress === n;

describe("run streams: resumption, joining, framing", () => {
  let berth: BerthProcess;
  const json = { "content-type": "application/json" };

  before(async () => {
    berth = await startBerth({ env: { BERTH_STREAM_HEARTBEAT_SECONDS: "0.2" } });
  });
  after(() => berth.stop());

  async function thread(): Promise<string> {
    return (await berth.client.threads.create()).thread_id;
  }

  function postStream(threadId: string, body: Record<string, unknown>): Promise<OpenedStream> {
    return openStream(`${berth.url}/threads/${threadId}/runs/stream`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ assistant_id: "slow", stream_mode: ["values", "custom"], ...body }),
    });
  }

  function join(threadId: string, runId: string, lastEventId?: string): Promise<OpenedStream> {
    return openStream(`${berth.url}/threads/${threadId}/runs/${runId}/stream`, {
      headers: lastEventId === undefined ? {} : { "last-event-id": lastEventId },
    });
  }

  async function replay(threadId: string, runId: string): Promise<SseEvent[]> {
    return (await collect((await join(threadId, runId, "-1")).frames)).events;
  }

  function runIdOf(response: Response): string {
    const location = response.headers.get("content-location");
    assert.ok(location, "Content-Location header");
    return location.split("/").at(-1)!;
  }

  it("a stream cut mid-run and rejoined with Last-Event-ID continues with no gap and no duplicate", async () => {
    const threadId = await thread();
    const steps = 5;
    const first = await postStream(threadId, { input: { steps, delay_ms: 150 } });
    const runId = runIdOf(first.response);
    const head = await take(first.frames, 5);
    first.abort();
    const lastSeen = head.at(-1)!.id!;

    const rest = await collect((await join(threadId, runId, lastSeen)).frames);
    const full = await replay(threadId, runId);

    assert.equal(full.length, 2 * steps + 2, "metadata, the input's values, then custom+values per step");
    assert.deepEqual(
      full.map((event) => event.id),
      full.map((_, index) => String(index)),
      "ids count up from 0",
    );
    assert.deepEqual(wire([...head, ...rest.events]), wire(full));
    assert.equal((await berth.client.runs.get(threadId, runId)).status, "success", "cutting the stream does not cancel the run");
  });

  it("stream_resumable: the SDK's joinStream with lastEventId -1 replays the run from its start", async () => {
    const threadId = await thread();
    let runId: string | undefined;
    const stream = berth.client.runs.stream(threadId, "slow", {
      input: { steps: 4, delay_ms: 150 },
      streamMode: ["values", "custom"],
      streamResumable: true,
      onRunCreated: (meta) => (runId = meta.run_id),
    });
    const seen: { id?: string; event: string; data: unknown }[] = [];
    for await (const chunk of stream) {
      seen.push(chunk as { id?: string; event: string; data: unknown });
      if (chunk.event === "custom") break; // leave while the run goes on
    }
    assert.ok(runId, "onRunCreated got the run id from the response headers");

    const joined: { id?: string; event: string; data: unknown }[] = [];
    for await (const chunk of berth.client.runs.joinStream(threadId, runId, { lastEventId: "-1" })) joined.push(chunk);

    assert.deepEqual(joined[0], {
      id: "0",
      event: "metadata",
      data: { run_id: runId, attempt: 1 },
    });
    assert.deepEqual(wire(joined.slice(0, seen.length)), wire(seen), "the replay starts with what the first stream showed");
    assert.deepEqual(wire(joined), wire(await replay(threadId, runId)), "and goes on to the run's end");
    assert.deepEqual(joined.at(-1)?.data, { steps: 4, delay_ms: 150, done: 4 });
  });

  it("a join without Last-Event-ID receives only the events that follow it", async () => {
    const threadId = await thread();
    const run = await berth.client.runs.create(threadId, "slow", {
      input: { steps: 5, delay_ms: 200 },
      streamMode: ["values", "custom"],
    });
    const observer = await join(threadId, run.run_id, "-1");
    const early = await takeUntil(observer.frames, isCustom(2));
    const seenBeforeJoin = Number(early.at(-1)!.id);

    const late = await join(threadId, run.run_id);
    const [lateResult, observerRest] = await Promise.all([collect(late.frames), collect(observer.frames)]);
    const observed = [...early, ...observerRest.events];

    assert.ok(lateResult.events.length > 0, "the late joiner gets the rest of the run");
    const firstLate = Number(lateResult.events[0].id);
    assert.ok(firstLate > seenBeforeJoin, `first event of the late joiner (${firstLate}) is after ${seenBeforeJoin}`);
    assert.ok(
      lateResult.events.every((event) => event.event !== "metadata"),
      "no replay of the metadata event",
    );
    assert.deepEqual(
      wire(lateResult.events),
      wire(observed.filter((event) => Number(event.id) >= firstLate)),
      "a contiguous tail of the stream, up to its end",
    );
  });

  it("several concurrent joiners each receive every event", async () => {
    const threadId = await thread();
    const run = await berth.client.runs.create(threadId, "slow", {
      input: { steps: 4, delay_ms: 100 },
      streamMode: ["values", "custom", "updates"],
    });
    const joiners = await Promise.all([0, 1, 2, 3, 4].map(() => join(threadId, run.run_id, "-1")));
    const results = await Promise.all(joiners.map((joiner) => collect(joiner.frames)));
    const full = await replay(threadId, run.run_id);
    assert.equal(full.length, 2 + 3 * 4, "metadata, input values, then custom+updates+values per step");
    for (const [index, result] of results.entries()) assert.deepEqual(wire(result.events), wire(full), `joiner ${index}`);
  });

  it("a client that stops reading mid-run gets every event once, in order, when it reads on", async () => {
    const threadId = await thread();
    // Each values and debug event carries this message: tens of MB in all, more than the loopback socket's buffers
    // hold, so the server has to wait for this reader rather than write each event as it is published.
    const message = "x".repeat(4 * 1024 * 1024);
    const opened = await postStream(threadId, {
      assistant_id: "chat",
      input: { messages: [{ role: "human", content: message }] },
      stream_mode: ["values", "updates", "debug"],
    });
    const runId = runIdOf(opened.response);
    const head = await take(opened.frames, 1);
    // Not reading while the run streams and ends.
    await berth.client.runs.join(threadId, runId);
    const rest = await collect(opened.frames);
    const full = await replay(threadId, runId);

    const digest = (events: SseEvent[]) =>
      events.map(({ id, event, data }) => `${id} ${event} ${createHash("sha256").update(JSON.stringify(data)).digest("hex")}`);
    const received = [...head, ...rest.events];
    assert.deepEqual(digest(received), digest(full));
    assert.deepEqual(
      received.map((event) => event.id),
      received.map((_, index) => String(index)),
      "ids count up from 0",
    );
    const bytes = received.reduce((sum, event) => sum + JSON.stringify(event.data).length, 0);
    assert.ok(bytes > 16 * 1024 * 1024, `the stream carried ${bytes} bytes`);
    const last = received.filter((event) => event.event === "values").at(-1)!.data as { messages: { content: string }[] };
    assert.equal(last.messages[0]?.content, message, "the input message arrives whole");
    assert.equal(last.messages.length, 3, "the input, the model's answer and the summary");
  });

  it("the POST stream response carries Content-Location and Location, and every event has an id", async () => {
    const threadId = await thread();
    const opened = await postStream(threadId, { input: { steps: 2, delay_ms: 20 } });
    const runId = runIdOf(opened.response);
    assert.equal(opened.response.headers.get("content-location"), `/threads/${threadId}/runs/${runId}`);
    assert.equal(opened.response.headers.get("location"), `/threads/${threadId}/runs/${runId}/stream`);
    const { events } = await collect(opened.frames);
    assert.equal(events.length, 6);
    assert.deepEqual(
      events.map((event) => event.id),
      ["0", "1", "2", "3", "4", "5"],
    );
    assert.deepEqual(events[0].data, { run_id: runId, attempt: 1 });

    const joined = await join(threadId, runId, "-1");
    assert.equal(joined.response.headers.get("location"), `/threads/${threadId}/runs/${runId}/stream`);
    assert.ok((await collect(joined.frames)).events.every((event) => event.id !== undefined));

    // A run that is not there is the stream's one error event, as a run of a thread the user cannot see.
    const missing = await collect((await join(threadId, crypto.randomUUID())).frames);
    assert.deepEqual(
      missing.events.map((event) => [event.event, event.data]),
      [["error", { error: "NotFoundError", message: "404: Run not found" }]],
    );
  });

  it("sends `: heartbeat` comments while a stream is idle", async () => {
    const threadId = await thread();
    const opened = await postStream(threadId, { input: { steps: 2, delay_ms: 700 } });
    const { events, comments } = await collect(opened.frames);
    assert.equal(events.length, 6);
    assert.ok(comments.length >= 2, `expected heartbeats during 700 ms steps, got ${comments.length}`);
    assert.ok(comments.every((comment) => comment.text === "heartbeat"));
    // Heartbeats come while the stream is quiet: between the input's values and the first step's output.
    const [inputValues, firstCustom] = [events[1], events[2]];
    assert.ok(
      comments.some((comment) => comment.at >= inputValues.at && comment.at <= firstCustom.at),
      "a heartbeat during the first step",
    );
  });

  // Ending is driven by the run's end notice, never by a timer: a stream that missed it would stay open until the test
  // times out. The bound is far above any scheduling delay of a loaded machine, so it fails only on such a hang.
  const END_BOUND_MS = 5000;

  it("ends the response right after the run's last event", async () => {
    const threadId = await thread();
    const opened = await postStream(threadId, { input: { steps: 3, delay_ms: 100 } });
    const runId = runIdOf(opened.response);
    const joiner = await join(threadId, runId, "-1");
    const [posted, joined] = await Promise.all([collect(opened.frames), collect(joiner.frames)]);
    for (const [name, result] of [
      ["POST stream", posted],
      ["join", joined],
    ] as const) {
      const tail = result.endedAt - result.events.at(-1)!.at;
      assert.ok(tail < END_BOUND_MS, `${name} ended ${tail} ms after its last event`);
    }
    // Joining an ended run after its last event: nothing to send, the response ends at once.
    const started = Date.now();
    const empty = await collect((await join(threadId, runId, posted.events.at(-1)!.id)).frames);
    assert.deepEqual(empty.events, []);
    assert.ok(empty.endedAt - started < END_BOUND_MS, `empty join took ${empty.endedAt - started} ms`);
  });
});
