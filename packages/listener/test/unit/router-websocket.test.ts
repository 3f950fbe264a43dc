import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import WebSocket, { type RawData, WebSocketServer } from "ws";
import { type Authorization, Router } from "../../src/router/router.js";

// WebSocket upgrades through the router, against a plain `ws` server as the
// deployment's upstream: admitted as any request is, then tunnelled both ways.

const UPSTREAM_KEY = "upstream-secret";

interface Upstream {
  url: string;
  server: WebSocketServer;
  /** Each accepted connection, with the handshake request the upstream saw. */
  connections: Array<{ socket: WebSocket; request: http.IncomingMessage }>;
  /** Resolves with the next accepted connection. */
  nextConnection(): Promise<{ socket: WebSocket; request: http.IncomingMessage }>;
  close(): Promise<void>;
}

/** A `ws` server that, like an agent server, accepts only the router's key. */
async function startUpstream(): Promise<Upstream> {
  const server = new WebSocketServer({
    host: "127.0.0.1",
    port: 0,
    handleProtocols: (protocols) => (protocols.has("berth.v2") ? "berth.v2" : false),
    verifyClient: ({ req }, done) => {
      if (req.headers["x-api-key"] === UPSTREAM_KEY) done(true);
      else done(false, 401, "Unauthorized", { "content-type": "text/plain", "x-upstream": "refused" });
    },
  });
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const connections: Upstream["connections"] = [];
  const waiting: Array<(connection: Upstream["connections"][number]) => void> = [];
  server.on("connection", (socket, request) => {
    const connection = { socket, request };
    connections.push(connection);
    waiting.shift()?.(connection);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    connections,
    nextConnection: () => new Promise((resolve) => waiting.push(resolve)),
    close: async () => {
      for (const client of server.clients) client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function startRouter(): Promise<{ router: Router; base: string; ws: string }> {
  const keys = new Map<string, Authorization>([
    ["good", "allowed"],
    ["foreign", "denied"],
  ]);
  const router = new Router({
    host: "127.0.0.1",
    port: 0,
    authorize: async (_deploymentId, apiKey) => {
      if (apiKey === "boom") throw new Error("control plane unreachable");
      return keys.get(apiKey) ?? "unknown_key";
    },
  });
  const base = await router.listen();
  return { router, base, ws: base.replace(/^http/, "ws") };
}

/** Opens a WebSocket; resolves once it is open. */
async function connect(url: string, options: WebSocket.ClientOptions = {}, protocols?: string[]): Promise<WebSocket> {
  const socket = new WebSocket(url, protocols, options);
  await once(socket, "open");
  return socket;
}

/** A handshake the router or the upstream refuses: its status, headers and body. */
function refusal(
  url: string,
  options: WebSocket.ClientOptions = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options);
    socket.on("open", () => reject(new Error("the handshake was accepted")));
    socket.on("unexpected-response", (_request, response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    socket.on("error", (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

/** The next message a socket receives. */
async function nextMessage(socket: WebSocket): Promise<{ data: RawData; isBinary: boolean }> {
  const [data, isBinary] = (await once(socket, "message")) as [RawData, boolean];
  return { data, isBinary };
}

/** Resolves with the close code and reason a socket sees. */
function closed(socket: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => socket.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
}

const KEY = { headers: { "x-api-key": "good" } };

describe("WebSocket upgrades through the router", () => {
  const cleanup: Array<() => Promise<void>> = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
  });
  /** A router whose deployment `dep` is served by a fresh upstream. */
  const serving = async () => {
    const upstream = await startUpstream();
    const started = await startRouter();
    cleanup.push(
      () => started.router.close(0),
      () => upstream.close(),
    );
    started.router.setTarget("dep", upstream.url, UPSTREAM_KEY);
    return { upstream, ...started };
  };

  test("frames both ways (text, and 8 MB binary with backpressure); the upstream sees the path, the router's key and X-Forwarded-*", {
    timeout: 60_000,
  }, async () => {
    const { upstream, ws } = await serving();

    const accepted = upstream.nextConnection();
    const client = await connect(
      `${ws}/d/dep/threads/t-1/stream/events?x=1`,
      { headers: { "x-api-key": "good", "x-custom": "kept" } },
      ["berth.v2"],
    );
    const { socket: server, request } = await accepted;
    assert.equal(client.protocol, "berth.v2", "the negotiated subprotocol comes back");
    assert.equal(request.url, "/threads/t-1/stream/events?x=1");
    assert.equal(request.headers["x-api-key"], UPSTREAM_KEY, "the upstream gets the router's key, not the caller's");
    assert.equal(request.headers["x-custom"], "kept");
    assert.equal(request.headers["x-forwarded-prefix"], "/d/dep");
    assert.equal(request.headers["x-forwarded-proto"], "http");

    client.send(JSON.stringify({ id: 1, method: "subscription.subscribe" }));
    const fromClient = await nextMessage(server);
    assert.equal(fromClient.isBinary, false);
    assert.deepEqual(JSON.parse(fromClient.data.toString()), { id: 1, method: "subscription.subscribe" });
    server.send(JSON.stringify({ type: "success", id: 1 }));
    assert.deepEqual(JSON.parse((await nextMessage(client)).data.toString()), { type: "success", id: 1 });

    // Larger than every socket buffer on the way: the tunnel must pause and resume, losing nothing.
    const big = randomBytes(8 * 1024 * 1024);
    server.send(big);
    const down = await nextMessage(client);
    assert.equal(down.isBinary, true);
    assert.ok(Buffer.from(down.data as Buffer).equals(big), "the binary frame arrives intact downstream");
    client.send(big);
    const up = await nextMessage(server);
    assert.ok(Buffer.from(up.data as Buffer).equals(big), "the binary frame arrives intact upstream");

    // Many small frames keep their order.
    const received: string[] = [];
    const all = new Promise<void>((resolve) =>
      client.on("message", (data) => {
        received.push(data.toString());
        if (received.length === 500) resolve();
      }),
    );
    for (let index = 0; index < 500; index += 1) server.send(`event ${index}`);
    await all;
    assert.deepEqual(
      received,
      Array.from({ length: 500 }, (_, index) => `event ${index}`),
    );
    client.close();
    await closed(server);
  });

  test("a close from either side reaches the other with its code; the tunnel then no longer counts as open", {
    timeout: 30_000,
  }, async () => {
    const { upstream, router, ws } = await serving();

    // The client closes.
    let accepted = upstream.nextConnection();
    const first = await connect(`${ws}/d/dep/threads/a/stream/events`, KEY);
    const firstServer = (await accepted).socket;
    assert.equal(router.openRequests("dep"), 1, "an open tunnel is an open request of its target");
    const serverSaw = closed(firstServer);
    first.close(4001, "client done");
    assert.deepEqual(await serverSaw, { code: 4001, reason: "client done" });
    await router.drained(upstream.url);
    assert.equal(router.openRequests("dep"), 0);

    // The upstream closes.
    accepted = upstream.nextConnection();
    const second = await connect(`${ws}/d/dep/threads/b/stream/events`, KEY);
    const secondServer = (await accepted).socket;
    const clientSaw = closed(second);
    secondServer.close(4002, "server done");
    assert.deepEqual(await clientSaw, { code: 4002, reason: "server done" });
    await router.drained(upstream.url);

    // The upstream's connection dies without a close frame: the client's is cut too.
    accepted = upstream.nextConnection();
    const third = await connect(`${ws}/d/dep/threads/c/stream/events`, KEY);
    const thirdServer = (await accepted).socket;
    const cut = closed(third);
    thirdServer.terminate();
    assert.equal((await cut).code, 1006, "an abnormal closure, as when connected directly");
    await router.drained(upstream.url);

    // The client's connection dies: the upstream's is cut too.
    accepted = upstream.nextConnection();
    const fourth = await connect(`${ws}/d/dep/threads/d/stream/events`, KEY);
    const fourthServer = (await accepted).socket;
    const gone = closed(fourthServer);
    fourth.terminate();
    assert.equal((await gone).code, 1006);
    await router.drained(upstream.url);
    assert.equal(router.openRequests("dep"), 0);
  });

  test("a switch: the old revision's tunnel stays open (and undrained) until it closes; new handshakes go to the new one", {
    timeout: 30_000,
  }, async () => {
    const oldRevision = await startUpstream();
    const newRevision = await startUpstream();
    const { router, ws } = await startRouter();
    cleanup.push(
      () => router.close(0),
      () => oldRevision.close(),
      () => newRevision.close(),
    );
    router.setTarget("dep", oldRevision.url, UPSTREAM_KEY);
    const acceptedOld = oldRevision.nextConnection();
    const before = await connect(`${ws}/d/dep/threads/a/stream/events`, KEY);
    const oldServer = (await acceptedOld).socket;

    router.setTarget("dep", newRevision.url);
    let drained = false;
    const draining = router.drained(oldRevision.url).then(() => (drained = true));
    const acceptedNew = newRevision.nextConnection();
    const afterSwitch = await connect(`${ws}/d/dep/threads/b/stream/events`, KEY);
    await acceptedNew;
    assert.equal(oldRevision.connections.length, 1, "nothing new reaches the old revision");

    oldServer.send("still here");
    assert.equal((await nextMessage(before)).data.toString(), "still here");
    assert.equal(drained, false, "the old revision is not drained while its tunnel is open");
    before.close();
    await draining;
    afterSwitch.close();
    await router.drained(newRevision.url);
  });

  test("refused like any request: no key 401, unknown key 401, foreign key 403, unknown deployment 404, not serving 503, no check possible 503", async () => {
    const { upstream, router, ws } = await serving();
    router.setTarget("idle", null);
    const path = "/threads/t/stream/events";

    const anonymous = await refusal(`${ws}/d/dep${path}`);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers["content-type"], "application/json");
    assert.match(JSON.parse(anonymous.body).detail, /Missing API key/);
    assert.equal((await refusal(`${ws}/d/dep${path}`, { headers: { "x-api-key": "nobody" } })).status, 401);
    assert.equal((await refusal(`${ws}/d/dep${path}`, { headers: { authorization: "Bearer nobody" } })).status, 401);
    const foreign = await refusal(`${ws}/d/dep${path}`, { headers: { "x-api-key": "foreign" } });
    assert.equal(foreign.status, 403);
    assert.match(JSON.parse(foreign.body).detail, /no access to deployment dep/);
    assert.equal((await refusal(`${ws}/d/missing${path}`, KEY)).status, 404);
    assert.equal((await refusal(`${ws}/elsewhere`, KEY)).status, 404);
    const idle = await refusal(`${ws}/d/idle${path}`, KEY);
    assert.equal(idle.status, 503);
    assert.equal(idle.headers["retry-after"], "5");
    assert.equal((await refusal(`${ws}/d/dep${path}`, { headers: { "x-api-key": "boom" } })).status, 503);
    assert.equal(upstream.connections.length, 0, "nothing refused reached the upstream");

    // A Bearer key is the platform's credential: accepted, and not passed on.
    const accepted = upstream.nextConnection();
    const bearer = await connect(`${ws}/d/dep${path}`, { headers: { authorization: "Bearer good" } });
    const { request } = await accepted;
    assert.equal(request.headers.authorization, undefined);
    bearer.close();
    await router.drained(upstream.url);
  });

  test("the upstream's own refusal is relayed; an unreachable upstream is a 502; a non-WebSocket upgrade is a 400", async () => {
    const { upstream, router, base, ws } = await serving();
    // No upstream key: the upstream refuses the handshake with its own 401, which the client sees as it is.
    router.setTarget("keyless", upstream.url);
    const upstreamRefused = await refusal(`${ws}/d/keyless/threads/t/stream/events`, KEY);
    assert.equal(upstreamRefused.status, 401);
    assert.equal(upstreamRefused.headers["x-upstream"], "refused");
    await router.drained(upstream.url);

    const dead = net.createServer();
    dead.listen(0, "127.0.0.1");
    await once(dead, "listening");
    const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => dead.close(() => resolve()));
    router.setTarget("gone", deadUrl, UPSTREAM_KEY);
    const unreachable = await refusal(`${ws}/d/gone/threads/t/stream/events`, KEY);
    assert.equal(unreachable.status, 502);
    assert.match(JSON.parse(unreachable.body).detail, /could not be reached: ECONNREFUSED/);
    await router.drained(deadUrl);

    const h2c = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const request = http.request(`${base}/d/dep/ok`, {
        headers: { ...KEY.headers, connection: "Upgrade", upgrade: "h2c" },
      });
      request.on("response", resolve);
      request.on("error", reject);
      request.end();
    });
    assert.equal(h2c.statusCode, 400);
    h2c.resume();
    assert.equal(upstream.connections.length, 0);
  });

  test("closing the router cuts open tunnels once its grace period is over", { timeout: 30_000 }, async () => {
    const { upstream, router, ws } = await serving();
    const accepted = upstream.nextConnection();
    const client = await connect(`${ws}/d/dep/threads/t/stream/events`, KEY);
    const server = (await accepted).socket;
    const clientSaw = closed(client);
    const serverSaw = closed(server);
    await router.close(0);
    assert.equal((await clientSaw).code, 1006);
    assert.equal((await serverSaw).code, 1006);
    await router.drained(upstream.url);
  });
});
