// The listener's metrics loop against a stand-in agent server on loopback: counters become
// deltas between reads, a restarted server's new counters count whole, a server that cannot
// be read is skipped, and one first seen long after its start only gives a baseline.
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import type { MetricSample } from "@berth/listener-protocol";
import type { Logger } from "@berth/service-kit";
import type { ControlPlaneLink } from "../../src/listener/link.js";
import { type Metered, MetricsPusher } from "../../src/listener/metrics-pusher.js";

const KEY = "upstream-key";

interface Body {
  status: number;
  start: number;
  cpu: number;
  success: number;
  error: number;
  /** Cumulative counts for the bounds 100 and 1000 ms. */
  counts: [number, number];
}

let answer: Body;
let server: Server;
let url = "";

before(async () => {
  server = createServer((request, response) => {
    if (request.headers["x-api-key"] !== KEY || !request.url?.startsWith("/metrics")) return void response.writeHead(401).end();
    const count = answer.success + answer.error;
    const body = {
      queue: { n_pending: 4, n_running: 1 },
      workers: { max: 10, active: 1, available: 9 },
      runs: {
        finished: { success: answer.success, error: answer.error, timeout: 0, interrupted: 0 },
        duration_ms: { le: [100, 1000], counts: answer.counts, count, sum: count * 200 },
      },
      process: { cpu_seconds: answer.cpu, resident_memory_bytes: 50_000_000, start_time_seconds: answer.start },
    };
    response.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

/** A link that keeps what it is sent; nothing else of it is called. */
function recordingLink(): { link: ControlPlaneLink; pushed: MetricSample[][] } {
  const pushed: MetricSample[][] = [];
  const link = {
    pushMetrics: async (samples: MetricSample[]) => void pushed.push(samples),
  } as unknown as ControlPlaneLink;
  return { link, pushed };
}

const quiet = { debug() {}, warn() {} } as unknown as Logger;
const deployment: Metered = {
  deploymentId: "d-1",
  metricsTargets: () => [{ replica: "replica-1", url, upstreamKey: KEY }],
};
const nowSeconds = () => Math.floor(Date.now() / 1000);

test("counters become deltas between reads; a restart counts the new values whole; an unreadable server is skipped", async () => {
  const { link, pushed } = recordingLink();
  const pusher = new MetricsPusher(60_000, link, () => [deployment], quiet);
  const start = nowSeconds() - 5;

  // Just started: everything it counted is new.
  answer = { status: 200, start, cpu: 1.5, success: 2, error: 1, counts: [1, 3] };
  await pusher.tick();
  assert.equal(pushed.length, 1);
  const [first] = pushed[0]!;
  assert.equal(first!.deployment_id, "d-1");
  assert.equal(first!.replica, "replica-1");
  assert.equal(first!.cpu_seconds, 1.5);
  assert.equal(first!.memory_bytes, 50_000_000);
  assert.equal(first!.pending_runs, 4);
  assert.equal(first!.running_runs, 1);
  assert.ok(first!.interval_seconds >= 4, `since its start: ${first!.interval_seconds}`);
  assert.deepEqual(first!.runs?.finished, { success: 2, error: 1, timeout: 0, interrupted: 0 });
  assert.deepEqual(first!.runs?.duration_ms, { le: [100, 1000], counts: [1, 3], count: 3, sum: 600 });

  answer = { status: 200, start, cpu: 2, success: 5, error: 1, counts: [3, 6] };
  await pusher.tick();
  const [second] = pushed[1]!;
  assert.equal(second!.cpu_seconds, 0.5);
  assert.ok(second!.interval_seconds < 4, `since the last read: ${second!.interval_seconds}`);
  assert.deepEqual(second!.runs?.finished, { success: 3, error: 0, timeout: 0, interrupted: 0 });
  assert.deepEqual(second!.runs?.duration_ms, { le: [100, 1000], counts: [2, 3], count: 3, sum: 600 });

  answer = { ...answer, status: 500 };
  await pusher.tick();
  assert.equal(pushed.length, 2, "nothing sent for a server that cannot be read");

  // Restarted: counters back near zero.
  answer = { status: 200, start: start + 3, cpu: 0.25, success: 1, error: 0, counts: [1, 1] };
  await pusher.tick();
  const [third] = pushed[2]!;
  assert.equal(third!.cpu_seconds, 0.25);
  assert.deepEqual(third!.runs?.finished, { success: 1, error: 0, timeout: 0, interrupted: 0 });
  assert.deepEqual(third!.runs?.duration_ms.counts, [1, 1]);
});

test("a server first seen long after its start gives a baseline, then deltas", async () => {
  const { link, pushed } = recordingLink();
  const pusher = new MetricsPusher(60_000, link, () => [deployment], quiet);
  const start = nowSeconds() - 3600;
  answer = { status: 200, start, cpu: 900, success: 500, error: 20, counts: [300, 510] };
  await pusher.tick();
  assert.equal(pushed.length, 0, "an hour of runs is not one step's");
  answer = { status: 200, start, cpu: 901, success: 502, error: 20, counts: [302, 512] };
  await pusher.tick();
  assert.equal(pushed[0]![0]!.cpu_seconds, 1);
  assert.deepEqual(pushed[0]![0]!.runs?.finished, { success: 2, error: 0, timeout: 0, interrupted: 0 });
});

test("a failing link is logged, not thrown", async () => {
  const warned: string[] = [];
  const logger = { debug() {}, warn: (_: unknown, message: string) => void warned.push(message) } as unknown as Logger;
  const link = {
    pushMetrics: async () => {
      throw new Error("control plane down");
    },
  } as unknown as ControlPlaneLink;
  answer = { status: 200, start: nowSeconds(), cpu: 1, success: 0, error: 0, counts: [0, 0] };
  await new MetricsPusher(60_000, link, () => [deployment], logger).tick();
  assert.equal(warned.length, 1);
});
