// Load generator, run as its own process by run.mjs: one scenario against one
// server, printing one JSON result line. Closed-loop: `concurrency` workers each
// send their next request when the previous one answered.
import http from "node:http";
import { sseEvents } from "./common.mjs";

const [, , baseUrl, scenario, optionsJson] = process.argv;
const options = JSON.parse(optionsJson ?? "{}");
const json = { "content-type": "application/json" };

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : null;
}

/** Runs `operation` from `concurrency` loops until `requests` are done or `seconds` passed. */
async function closedLoop(operation, { concurrency, requests, seconds }) {
  const latencies = [];
  let started = 0;
  let failures = 0;
  const deadline = performance.now() + seconds * 1000;
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < requests && performance.now() < deadline) {
        started++;
        const t = performance.now();
        try {
          await operation();
          latencies.push(performance.now() - t);
        } catch {
          failures++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - begin) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    completed: latencies.length,
    failures,
    per_second: latencies.length / elapsed,
    p50_ms: percentile(latencies, 0.5),
    p99_ms: percentile(latencies, 0.99),
  };
}

// Requests go through node:http with keep-alive, for every server alike: fetch's own CPU per request (~0.45 ms
// on a 2-core machine) would take a core's share from whichever server is measured.
const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency ?? 32 });

function httpPost(path, body) {
  return new Promise((resolve, reject) => {
    const request = http.request(baseUrl + path, { method: "POST", headers: json, agent }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () => resolve({ ok: response.statusCode < 300, status: response.statusCode, text }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(JSON.stringify(body));
  });
}

async function post(path, body) {
  const { ok, status, text } = await httpPost(path, body);
  if (!ok || text.includes("__error__")) throw new Error(`${status} ${text.slice(0, 200)}`);
  return text.trim() ? JSON.parse(text) : null;
}

/** Reads an SSE response; returns the times of the first event and of the last `messages` event. */
async function timedStream(path, body) {
  const start = performance.now();
  const response = await fetch(baseUrl + path, { method: "POST", headers: json, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${response.status}`);
  let first = null;
  let lastToken = null;
  let events = 0;
  for await (const { name } of sseEvents(response.body)) {
    events++;
    first ??= performance.now() - start;
    if (name === "messages") lastToken = performance.now() - start;
  }
  return { first, lastToken, events };
}

const scenarios = {
  async ok() {
    // Imported here: only this scenario needs bench/'s own install.
    const { default: autocannon } = await import("autocannon");
    const result = await autocannon({ url: `${baseUrl}/ok`, connections: options.concurrency, duration: options.seconds });
    return {
      per_second: result.requests.average,
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      failures: result.errors + result.non2xx,
    };
  },
  statelessWait() {
    const graph = options.graph ?? { assistant_id: "trivial", input: { text: "hi" } };
    return closedLoop(() => post("/runs/wait", graph), options);
  },
  threadWait() {
    const graph = options.graph ?? { assistant_id: "trivial", input: { text: "hi" } };
    return closedLoop(async () => {
      const thread = await post("/threads", {});
      await post(`/threads/${thread.thread_id}/runs/wait`, graph);
    }, options);
  },
  async firstEvent() {
    const firsts = [];
    const lasts = [];
    const deadline = performance.now() + options.seconds * 1000;
    for (let i = 0; i < options.requests && performance.now() < deadline; i++) {
      const timing = await timedStream("/runs/stream", {
        assistant_id: "tokens",
        input: { messages: [{ type: "human", content: "hi" }] },
        stream_mode: "messages-tuple",
      });
      firsts.push(timing.first);
      lasts.push(timing.lastToken);
    }
    firsts.sort((a, b) => a - b);
    lasts.sort((a, b) => a - b);
    return { completed: firsts.length, first_event_p50_ms: percentile(firsts, 0.5), last_token_p50_ms: percentile(lasts, 0.5) };
  },
  async manyStreams() {
    const begin = performance.now();
    const results = await Promise.allSettled(
      Array.from({ length: options.streams }, () =>
        timedStream("/runs/stream", { assistant_id: "hold", input: { ms: options.holdMs }, stream_mode: "values" }),
      ),
    );
    const completed = results.filter((r) => r.status === "fulfilled" && r.value.events >= 2).length;
    return { streams: options.streams, completed, seconds: (performance.now() - begin) / 1000 };
  },
};

/** Reads a join stream to its end; returns the number of events. */
async function joinAll(path) {
  const response = await fetch(baseUrl + path, { headers: { "last-event-id": "-1" } });
  if (!response.ok) throw new Error(`${response.status}`);
  let events = 0;
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      if (/^event: /m.test(buffer.slice(0, end))) events++;
      buffer = buffer.slice(end + 2);
    }
  }
  return events;
}

/** One run streamed to many joiners at once (the run starts a second later, once they are all connected). */
scenarios.fanOut = async () => {
  const thread = await post("/threads", {});
  const run = await post(`/threads/${thread.thread_id}/runs`, {
    assistant_id: "tokens",
    input: { messages: [{ type: "human", content: "hi" }] },
    stream_mode: "messages-tuple",
    after_seconds: 1,
  });
  const begin = performance.now();
  const counts = await Promise.all(
    Array.from({ length: options.joiners }, () => joinAll(`/threads/${thread.thread_id}/runs/${run.run_id}/stream`)),
  );
  return {
    joiners: options.joiners,
    complete: counts.filter((count) => count === counts[0] && count > 40).length,
    events_each: counts[0],
    seconds_after_start: (performance.now() - begin) / 1000 - 1,
  };
};

const result = await scenarios[scenario]();
process.stdout.write(`${JSON.stringify(result)}\n`);
