import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import { type Authorization, Router } from "../../src/router/router.js";

// The router against tiny node:http upstreams: what it forwards, how it streams,
// how it answers on its own, and that a revision switch loses no request.

interface Upstream {
  url: string;
  close(): Promise<void>;
}

async function startUpstream(handler: http.RequestListener): Promise<Upstream> {
  const server = http.createServer(handler);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface TestRouter {
  router: Router;
  base: string;
  /** Keys passed to authorize, in order. */
  calls: string[];
  /** What authorize answers per key (anything else: unknown_key; "boom" throws). */
  keys: Map<string, Authorization>;
}

async function startRouter(cacheTtlMs?: number): Promise<TestRouter> {
  const calls: string[] = [];
  const keys = new Map<string, Authorization>([
    ["good", "allowed"],
    ["other-good", "allowed"],
    ["foreign", "denied"],
  ]);
  const router = new Router({
    host: "127.0.0.1",
    port: 0,
    cacheTtlMs,
    authorize: async (_deploymentId, apiKey) => {
      calls.push(apiKey);
      if (apiKey === "boom") throw new Error("control plane unreachable");
      return keys.get(apiKey) ?? "unknown_key";
    },
  });
  const base = await router.listen();
  return { router, base, calls, keys };
}

const KEY = { "x-api-key": "good" };

async function json(response: Response): Promise<{ status: number; type: string | null; body: unknown }> {
  return { status: response.status, type: response.headers.get("content-type"), body: await response.json() };
}

/** Sends `chunks` as one request body, each write after the previous was flushed. */
function sendBody(
  url: string,
  options: http.RequestOptions,
  write: (request: http.ClientRequest) => Promise<void>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, options, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }));
      response.on("error", reject);
    });
    request.on("error", reject);
    write(request).then(() => request.end(), reject);
  });
}

async function writeAll(request: http.ClientRequest, chunk: Buffer): Promise<void> {
  if (!request.write(chunk)) await once(request, "drain");
}

/** Reads a fetch body until `text` appears; returns everything read so far. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, seen: string, text: string): Promise<string> {
  const decoder = new TextDecoder();
  while (!seen.includes(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before ${JSON.stringify(text)}; got ${JSON.stringify(seen)}`);
    seen += decoder.decode(value, { stream: true });
  }
  return seen;
}

describe("forwarding", () => {
  const cleanup: Array<() => Promise<void>> = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  test("method, path, query, headers and a 10 MB body streamed through; the answer's status and headers back", {
    timeout: 30_000,
  }, async () => {
    let firstChunk: () => void = () => {};
    const firstChunkArrived = new Promise<void>((resolve) => (firstChunk = resolve));
    const upstream = await startUpstream((request, response) => {
      const hash = createHash("sha256");
      let bytes = 0;
      request.on("data", (chunk: Buffer) => {
        if (bytes === 0) firstChunk();
        bytes += chunk.length;
        hash.update(chunk);
      });
      request.on("end", () => {
        response.writeHead(201, { "content-type": "application/json", "set-cookie": ["a=1", "b=2"], "x-custom": "yes" });
        response.end(
          JSON.stringify({
            method: request.method,
            url: request.url,
            headers: request.headers,
            bytes,
            sha256: hash.digest("hex"),
          }),
        );
      });
    });
    const { router, base } = await startRouter();
    cleanup.push(
      () => router.close(),
      () => upstream.close(),
    );
    router.setTarget("dep", upstream.url);

    const MB = 1024 * 1024;
    const chunks = Array.from({ length: 10 }, () => randomBytes(MB));
    const expected = createHash("sha256");
    for (const chunk of chunks) expected.update(chunk);
    const answer = await sendBody(
      `${base}/d/dep/echo/path?x=1&y=two`,
      {
        method: "PUT",
        headers: {
          ...KEY,
          "content-type": "application/octet-stream",
          "content-length": 10 * MB,
          "x-trace": "abc",
          connection: "keep-alive, x-hop",
          "x-hop": "per-connection",
          "x-forwarded-for": "10.0.0.1",
        },
      },
      async (request) => {
        await writeAll(request, chunks[0]!);
        // The upstream has bytes before the client sent the rest: the body is streamed, not buffered.
        await firstChunkArrived;
        for (const chunk of chunks.slice(1)) await writeAll(request, chunk);
      },
    );
    assert.equal(answer.status, 201);
    assert.deepEqual(answer.headers["set-cookie"], ["a=1", "b=2"]);
    assert.equal(answer.headers["x-custom"], "yes");
    const seen = JSON.parse(answer.text) as {
      method: string;
      url: string;
      headers: Record<string, string>;
      bytes: number;
      sha256: string;
    };
    assert.equal(seen.method, "PUT");
    assert.equal(seen.url, "/echo/path?x=1&y=two");
    assert.equal(seen.bytes, 10 * MB);
    assert.equal(seen.sha256, expected.digest("hex"));
    assert.equal(seen.headers["x-trace"], "abc");
    assert.equal(seen.headers["content-type"], "application/octet-stream");
    assert.equal(seen.headers["x-hop"], undefined, "headers named in Connection are hop-by-hop");
    assert.equal(seen.headers["x-api-key"], undefined, "the platform key is not passed to the deployment");
    assert.equal(seen.headers.host, new URL(upstream.url).host);
    assert.equal(seen.headers["x-forwarded-for"], "10.0.0.1, 127.0.0.1");
    assert.equal(seen.headers["x-forwarded-proto"], "http");
    assert.equal(seen.headers["x-forwarded-host"], new URL(base).host);
    assert.equal(seen.headers["x-forwarded-prefix"], "/d/dep");
  });

  test("Authorization: Bearer is a key; it is dropped when it was the key, forwarded when X-Api-Key was", async () => {
    const upstream = await startUpstream((request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ authorization: request.headers.authorization ?? null, url: request.url }));
    });
    const { router, base } = await startRouter();
    cleanup.push(
      () => router.close(),
      () => upstream.close(),
    );
    router.setTarget("dep", `${upstream.url}/`);
    const bearer = await json(await fetch(`${base}/d/dep/threads`, { headers: { authorization: "Bearer good" } }));
    assert.deepEqual(bearer.body, { authorization: null, url: "/threads" });
    const both = await json(await fetch(`${base}/d/dep`, { headers: { ...KEY, authorization: "Bearer app-token" } }));
    assert.deepEqual(both.body, { authorization: "Bearer app-token", url: "/" });
  });

  test("SSE arrives event by event: the first event reaches the client before the upstream sends the second", {
    timeout: 10_000,
  }, async () => {
    let release: () => void = () => {};
    const clientSawFirst = new Promise<void>((resolve) => (release = resolve));
    let secondSent = false;
    const upstream = await startUpstream((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      response.write("event: first\ndata: 1\n\n");
      void clientSawFirst.then(() => {
        secondSent = true;
        response.end("event: second\ndata: 2\n\n");
      });
    });
    const { router, base } = await startRouter();
    cleanup.push(
      () => router.close(),
      () => upstream.close(),
    );
    router.setTarget("dep", upstream.url);
    const response = await fetch(`${base}/d/dep/threads/t/runs/stream`, { method: "POST", headers: KEY, body: "{}" });
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    const reader = response.body!.getReader();
    const first = await readUntil(reader, "", "event: first");
    assert.equal(secondSent, false);
    release();
    const all = await readUntil(reader, first, "event: second");
    assert.ok(all.endsWith("data: 2\n\n"));
    assert.equal((await reader.read()).done, true);
  });
});

describe("the router's own answers", () => {
  test("/ok, 401, 403, 404, 502, 503 with JSON bodies; /ok and OPTIONS of a deployment need no key", async () => {
    const upstream = await startUpstream((request, response) => {
      if (request.method === "OPTIONS") {
        response.writeHead(204, { "access-control-allow-origin": "*", "access-control-allow-headers": "x-api-key" });
        return void response.end();
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(request.url === "/ok" ? { ok: true } : { served: request.url }));
    });
    const refusing = await startUpstream(() => {});
    await refusing.close(); // nothing listens on its port any more
    const { router, base } = await startRouter();
    try {
      router.setTarget("dep", upstream.url);
      router.setTarget("idle", null);
      router.setTarget("down", refusing.url);

      assert.deepEqual(await json(await fetch(`${base}/ok`)), { status: 200, type: "application/json", body: { ok: true } });
      const elsewhere = await json(await fetch(`${base}/threads`, { headers: KEY }));
      assert.equal(elsewhere.status, 404);
      assert.match((elsewhere.body as { detail: string }).detail, /\/d\/<deployment id>/);
      assert.deepEqual(await json(await fetch(`${base}/d/nope/threads`, { headers: KEY })), {
        status: 404,
        type: "application/json",
        body: { detail: "Deployment nope not found" },
      });

      const missing = await json(await fetch(`${base}/d/dep/threads`, { method: "POST" }));
      assert.equal(missing.status, 401);
      assert.equal(missing.type, "application/json");
      assert.match((missing.body as { detail: string }).detail, /Missing API key/);
      assert.deepEqual((await json(await fetch(`${base}/d/dep/threads`, { headers: { "x-api-key": "nobody" } }))).body, {
        detail: "Invalid API key",
      });
      assert.equal((await fetch(`${base}/d/dep/threads`, { headers: { authorization: "Bearer nobody" } })).status, 401);
      const foreign = await json(await fetch(`${base}/d/dep/threads`, { headers: { "x-api-key": "foreign" } }));
      assert.equal(foreign.status, 403);
      assert.match((foreign.body as { detail: string }).detail, /revoked or has no access to deployment dep/);
      const unreachable = await fetch(`${base}/d/dep/threads`, { headers: { "x-api-key": "boom" } });
      assert.equal(unreachable.status, 503, "an authorize failure is not a verdict on the key");

      assert.deepEqual(await json(await fetch(`${base}/d/dep/ok`)), {
        status: 200,
        type: "application/json",
        body: { ok: true },
      });
      const preflight = await fetch(`${base}/d/dep/threads`, { method: "OPTIONS", headers: { origin: "http://app.local" } });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get("access-control-allow-origin"), "*");
      assert.deepEqual((await json(await fetch(`${base}/d/dep/threads?limit=2`, { headers: KEY }))).body, {
        served: "/threads?limit=2",
      });

      const idle = await json(await fetch(`${base}/d/idle/threads`, { headers: KEY }));
      assert.equal(idle.status, 503);
      assert.deepEqual(idle.body, { detail: "Deployment idle is not serving yet" });
      const down = await json(await fetch(`${base}/d/down/threads`, { method: "POST", headers: KEY, body: "{}" }));
      assert.equal(down.status, 502);
      assert.equal(down.type, "application/json");
      assert.match((down.body as { detail: string }).detail, /Deployment down could not be reached: ECONNREFUSED/);

      router.remove("dep");
      assert.deepEqual((await json(await fetch(`${base}/d/dep/threads`, { headers: KEY }))).body, {
        detail: "Deployment dep not found",
      });
      assert.equal((await fetch(`${base}/d/dep/ok`)).status, 404);
    } finally {
      await router.close();
      await upstream.close();
    }
  });

  test("auth cache: one authorize call per key within the TTL, concurrent checks included", async () => {
    const upstream = await startUpstream((_request, response) => response.end("{}"));
    const { router, base, calls } = await startRouter();
    try {
      router.setTarget("dep", upstream.url);
      for (let i = 0; i < 3; i++) assert.equal((await fetch(`${base}/d/dep/a`, { headers: KEY })).status, 200);
      const together = await Promise.all(
        Array.from({ length: 5 }, () => fetch(`${base}/d/dep/b`, { headers: { "x-api-key": "other-good" } })),
      );
      assert.deepEqual(
        together.map((response) => response.status),
        [200, 200, 200, 200, 200],
      );
      assert.deepEqual(calls, ["good", "other-good"]);
    } finally {
      await router.close();
      await upstream.close();
    }
  });

  test("auth cache: a key denied after the TTL lapsed stops working", { timeout: 20_000 }, async () => {
    const TTL = 1000;
    const upstream = await startUpstream((_request, response) => response.end("{}"));
    const { router, base, calls, keys } = await startRouter(TTL);
    try {
      router.setTarget("dep", upstream.url);
      const firstCheck = Date.now();
      assert.equal((await fetch(`${base}/d/dep/a`, { headers: KEY })).status, 200);
      keys.set("good", "denied"); // revoked
      assert.equal((await fetch(`${base}/d/dep/a`, { headers: KEY })).status, 200, "still cached");
      let status = 200;
      let requests = 0;
      while (status === 200) {
        status = (await fetch(`${base}/d/dep/a`, { headers: KEY })).status;
        requests += 1;
      }
      assert.equal(status, 403);
      assert.ok(Date.now() - firstCheck >= TTL, "denied only once the cached answer expired");
      assert.equal(calls.length, 2, `${requests} requests, but authorize asked only when the answer expired`);
    } finally {
      await router.close();
      await upstream.close();
    }
  });
});

describe("disconnects and retries", () => {
  test("a client that leaves aborts the upstream request; an upstream that dies cuts the client's stream", {
    timeout: 10_000,
  }, async () => {
    let upstreamClosed: () => void = () => {};
    const closedUpstream = new Promise<void>((resolve) => (upstreamClosed = resolve));
    const upstream = await startUpstream((request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("event: first\ndata: 1\n\n");
      if (request.url === "/hang") response.on("close", () => upstreamClosed());
      else setImmediate(() => request.socket.destroy());
    });
    const { router, base } = await startRouter();
    try {
      router.setTarget("dep", upstream.url);
      const abort = new AbortController();
      const hanging = await fetch(`${base}/d/dep/hang`, { headers: KEY, signal: abort.signal });
      await readUntil(hanging.body!.getReader(), "", "event: first");
      abort.abort();
      await closedUpstream;
      await router.drained(upstream.url); // the aborted request no longer counts

      const cut = await fetch(`${base}/d/dep/cut`, { headers: KEY });
      const reader = cut.body!.getReader();
      await assert.rejects(readUntil(reader, "", "never sent"), /terminated|aborted|closed|socket/i);
    } finally {
      await router.close();
      await upstream.close();
    }
  });

  test("a connection reset before any answer is retried once on the new target when the target changed meanwhile, else 502", async () => {
    const { router, base } = await startRouter();
    const next = await startUpstream((request, response) => {
      let body = "";
      request.setEncoding("utf8");
      request.on("data", (chunk: string) => (body += chunk));
      request.on("end", () => response.end(JSON.stringify({ server: "next", body })));
    });
    const switching = await startUpstream((request) => {
      router.setTarget("dep", next.url); // a switch while this request was on its way
      request.socket.destroy();
    });
    const dying = await startUpstream((request) => request.socket.destroy());
    try {
      router.setTarget("dep", switching.url);
      const retried = await fetch(`${base}/d/dep/runs`, { method: "POST", headers: KEY, body: '{"input":1}' });
      assert.equal(retried.status, 200);
      assert.deepEqual(await retried.json(), { server: "next", body: '{"input":1}' });

      router.setTarget("dep", dying.url);
      const failed = await json(await fetch(`${base}/d/dep/runs`, { method: "POST", headers: KEY, body: "{}" }));
      assert.equal(failed.status, 502);
      assert.match((failed.body as { detail: string }).detail, /could not be reached: ECONNRESET/);
    } finally {
      await router.close();
      await Promise.all([next.close(), switching.close(), dying.close()]);
    }
  });
});

describe("zero-downtime switch", () => {
  /** An upstream like a revision: fast JSON, slow chunked answers, SSE streams and uploads, each tagged with its name. */
  async function revision(name: string, onStreamStart?: () => void) {
    const stats = { requests: 0, inFlight: 0 };
    const upstream = await startUpstream((request, response) => {
      stats.requests += 1;
      stats.inFlight += 1;
      response.on("close", () => (stats.inFlight -= 1));
      const steps = (parts: string[], gapMs: number) => {
        const next = () => {
          const part = parts.shift()!;
          if (parts.length === 0) return void response.end(part);
          response.write(part);
          setTimeout(next, gapMs);
        };
        next();
      };
      if (request.url === "/fast") return void response.end(JSON.stringify({ server: name }));
      if (request.url === "/slow") {
        response.writeHead(200, { "x-server": name });
        return steps(["a", "b", "c"], 30);
      }
      if (request.url === "/stream") {
        onStreamStart?.();
        response.writeHead(200, { "content-type": "text/event-stream", "x-server": name });
        return steps([1, 2, 3, 4, 5].map((n) => `event: values\ndata: ${n}\n\n`).concat("event: end\ndata: null\n\n"), 20);
      }
      let bytes = 0;
      request.on("data", (chunk: Buffer) => (bytes += chunk.length));
      request.on("end", () => response.end(JSON.stringify({ server: name, bytes })));
    });
    return { ...upstream, stats };
  }

  test("20 clients looping through a switch: zero failures, and the old revision gets nothing new after it", {
    timeout: 60_000,
  }, async () => {
    let completed = 0;
    let switchAt = Number.POSITIVE_INFINITY;
    let switchNow: () => void = () => {};
    const switchMoment = new Promise<void>((resolve) => (switchNow = resolve));
    // The switch happens while a stream is open on the old revision: drained() must wait for it.
    const old = await revision("old", () => {
      if (completed >= switchAt) switchNow();
    });
    const fresh = await revision("new");
    const { router, base } = await startRouter();
    router.setTarget("dep", old.url);

    let switched = false;
    let stop = false;
    const failures: string[] = [];
    const lateOnOld: string[] = [];
    const progress: Array<{ at: number; resolve: () => void }> = [];
    const reached = (count: number) => new Promise<void>((resolve) => progress.push({ at: count, resolve }));
    const done = () => {
      completed += 1;
      for (const waiter of progress) if (completed >= waiter.at) waiter.resolve();
    };
    const upload = randomBytes(64 * 1024);

    const one = async (kind: number): Promise<void> => {
      const sentAfterSwitch = switched;
      let server: string | null;
      if (kind === 0) {
        const response = await fetch(`${base}/d/dep/fast`, { headers: KEY });
        if (response.status !== 200) throw new Error(`fast: ${response.status} ${await response.text()}`);
        server = ((await response.json()) as { server: string }).server;
      } else if (kind === 1) {
        const response = await fetch(`${base}/d/dep/slow`, { headers: KEY });
        const text = await response.text();
        if (response.status !== 200 || text !== "abc") throw new Error(`slow: ${response.status} ${text}`);
        server = response.headers.get("x-server");
      } else if (kind === 2) {
        const response = await fetch(`${base}/d/dep/stream`, { method: "POST", headers: KEY, body: "{}" });
        const text = await response.text();
        if (
          response.status !== 200 ||
          (text.match(/event: values/g) ?? []).length !== 5 ||
          !text.endsWith("event: end\ndata: null\n\n")
        ) {
          throw new Error(`stream: ${response.status} ${text}`);
        }
        server = response.headers.get("x-server");
      } else {
        const response = await fetch(`${base}/d/dep/upload`, { method: "POST", headers: KEY, body: upload });
        const answer = (await response.json()) as { server: string; bytes: number };
        if (response.status !== 200 || answer.bytes !== upload.length)
          throw new Error(`upload: ${response.status} ${JSON.stringify(answer)}`);
        server = answer.server;
      }
      if (sentAfterSwitch && server !== "new") lateOnOld.push(`kind ${kind} answered by ${server}`);
    };
    const client = async (index: number) => {
      for (let round = 0; !stop; round++) {
        try {
          await one((index + round) % 4);
        } catch (error) {
          failures.push(String(error));
        }
        done();
      }
    };
    const clients = Array.from({ length: 20 }, (_, index) => client(index));

    try {
      await reached(200);
      switchAt = completed;
      await switchMoment;
      switched = true;
      router.setTarget("dep", fresh.url);
      const openOnOld = old.stats.inFlight;
      await router.drained(old.url);
      assert.equal(old.stats.inFlight, 0, "drained() resolved with requests still open on the old revision");
      await old.close(); // stop the old revision
      const oldRequests = old.stats.requests;
      const doneAtStop = completed;
      await reached(doneAtStop + 200);
      stop = true;
      await Promise.all(clients);

      assert.deepEqual(failures, []);
      assert.deepEqual(lateOnOld, []);
      assert.ok(openOnOld > 0, "the switch happened with requests open on the old revision");
      assert.equal(old.stats.requests, oldRequests);
      assert.ok(fresh.stats.requests >= 200, `new revision served ${fresh.stats.requests}`);
    } finally {
      stop = true;
      await Promise.all(clients);
      await router.close();
      await Promise.all([old.close(), fresh.close()]);
    }
  });
});
