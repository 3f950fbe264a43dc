import assert from "node:assert/strict";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { Router } from "../../src/router/router.js";

// A sleeping deployment at the router: requests are held while it wakes, share one wake, and a failed wake answers 503.

describe("the router and a sleeping deployment", () => {
  let router: Router;
  let base: string;
  let upstream: http.Server;
  let upstreamUrl: string;
  const KEY = { "x-api-key": "good" };

  before(async () => {
    upstream = http.createServer((request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ path: request.url, key: request.headers["x-api-key"] }));
    });
    upstream.listen(0, "127.0.0.1");
    await once(upstream, "listening");
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    router = new Router({
      host: "127.0.0.1",
      port: 0,
      authorize: async (_id, key) => (key === "good" ? "allowed" : "unknown_key"),
    });
    base = await router.listen();
  });
  after(async () => {
    await router.close(0);
    upstream.closeAllConnections();
    upstream.close();
  });

  test("requests that arrive during a wake share it and go where it routed them", async () => {
    router.setTarget("d1", null, "upstream-key");
    let wakes = 0;
    let release: () => void = () => {};
    let begun: () => void = () => {};
    const woken = new Promise<void>((resolve) => (release = resolve));
    const started = new Promise<void>((resolve) => (begun = resolve));
    router.setAsleep("d1", async () => {
      wakes += 1;
      begun();
      await woken;
      router.setTarget("d1", upstreamUrl);
    });
    const before = Date.now();
    const requests = [1, 2, 3].map((n) => fetch(`${base}/d/d1/threads/${n}`, { headers: KEY }));
    // Those that arrive before the wake ends are held; it ends once the first has started it.
    await started;
    release();
    const answers = await Promise.all(
      requests.map(async (pending) => {
        const response = await pending;
        return { status: response.status, body: await response.json() };
      }),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 200],
    );
    assert.deepEqual(
      answers.map((answer) => (answer.body as { path: string }).path),
      ["/threads/1", "/threads/2", "/threads/3"],
    );
    assert.equal((answers[0]!.body as { key: string }).key, "upstream-key", "the upstream key is kept across the sleep");
    assert.equal(wakes, 1);
    assert.ok((router.lastRequestAt("d1") ?? 0) >= before);
  });

  test("a wake that fails answers 503 with its reason, and the next request tries again", async () => {
    let attempts = 0;
    router.setAsleep("d2", async () => {
      attempts += 1;
      if (attempts === 1) throw new Error("the agent server exited with code 1");
      router.setTarget("d2", upstreamUrl);
    });
    const failed = await fetch(`${base}/d/d2/ok`, { headers: KEY });
    assert.equal(failed.status, 503);
    assert.deepEqual(await failed.json(), { detail: "Deployment d2 could not wake: the agent server exited with code 1" });
    const again = await fetch(`${base}/d/d2/ok`, { headers: KEY });
    assert.equal(again.status, 200);
    assert.equal(attempts, 2);
  });

  test("an unknown key is refused without waking the deployment", async () => {
    let wakes = 0;
    router.setAsleep("d3", async () => {
      wakes += 1;
    });
    const refused = await fetch(`${base}/d/d3/threads`, { headers: { "x-api-key": "nope" } });
    assert.equal(refused.status, 401);
    assert.equal(wakes, 0);
  });
});
