// Authorization: the project's resource handlers (auth.on) on every operation, users authenticated by the built-in
// JWT scheme against a JWKS URL. The fixture (owner-auth) stamps an owner on everything and filters on it, denies
// deletes without a permission, shares assistants through a `$contains` filter and gives each user a store namespace.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Client, type Run } from "@langchain/langgraph-sdk";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { type BerthProcess, startBerth } from "@berth/test-support";

const ISSUER = "https://issuer.test";
const AUDIENCE = "berth";
const KID = "test-key";

type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];

interface TokenOptions {
  key?: SigningKey;
  expires?: string | number;
  audience?: string;
}

/** A token of the test's issuer for `sub`, with `claims` (permissions, scope). */
function signer(privateKey: SigningKey) {
  return (sub: string, claims: Record<string, unknown> = {}, options: TokenOptions = {}) =>
    new SignJWT({ sub, ...claims })
      .setProtectedHeader({ alg: "ES256", kid: KID })
      .setIssuer(ISSUER)
      .setAudience(options.audience ?? AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(options.expires ?? "10m")
      .sign(options.key ?? privateKey);
}

/** Serves `{keys: [jwk]}` on 127.0.0.1 at a free port. */
async function serveJwks(jwk: object): Promise<{ server: Server; url: string }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ keys: [jwk] }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json` };
}

const clientOf = (url: string, token: string) =>
  new Client({ apiUrl: url, defaultHeaders: { authorization: `Bearer ${token}` } });

/** Asserts the SDK call fails with `status`. */
const failsWith = (status: number, call: Promise<unknown>, message?: string) =>
  assert.rejects(call, (error: { status?: number }) => {
    assert.equal(error.status, status, message);
    return true;
  });

/** Reads a stream's first part: enough to show it opened (or to make it throw). */
const firstPart = async <T>(stream: AsyncGenerator<T>): Promise<T | undefined> => {
  const { value } = await stream.next();
  await stream.return(undefined);
  return value;
};

interface Whoami {
  user_id: string | null;
  permissions: string[] | null;
}

// A timeout: a stream that never opens fails the suite instead of hanging it.
describe("resource handlers (auth.on) with users of the built-in JWT scheme", { timeout: 120_000 }, () => {
  let berth: BerthProcess;
  let jwks: Server;
  let sign: ReturnType<typeof signer>;
  let fetchAs: (token: string | undefined, method: string, path: string, body?: unknown) => Promise<Response>;
  const tokens = { alice: "", bob: "", carol: "" };
  let alice: Client;
  let bob: Client;
  let carol: Client;
  // Alice's: assistants, an idle thread with a finished run, a busy thread with a long run.
  let aliceSlow: string;
  let aliceWhoami: string;
  let bobWhoami: string;
  let idle: string;
  let finishedRun: string;
  let busy: string;
  let longRun: string;
  const TOPIC = randomUUID();

  before(async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256");
    const served = await serveJwks({ ...(await exportJWK(publicKey)), kid: KID, alg: "ES256", use: "sig" });
    jwks = served.server;
    berth = await startBerth({
      project: "owner-auth",
      env: { BERTH_AUTH_JWT_JWKS_URL: served.url, BERTH_AUTH_JWT_ISSUER: ISSUER, BERTH_AUTH_JWT_AUDIENCE: AUDIENCE },
    });
    sign = signer(privateKey);
    // Alice's permissions are a `permissions` claim, carol's a `scope` claim; bob may not delete threads.
    tokens.alice = await sign("alice", { permissions: ["threads:delete", "crons:delete"] });
    tokens.bob = await sign("bob", { permissions: ["threads:read"] });
    tokens.carol = await sign("carol", { scope: "threads:delete crons:delete" });
    [alice, bob, carol] = [clientOf(berth.url, tokens.alice), clientOf(berth.url, tokens.bob), clientOf(berth.url, tokens.carol)];
    fetchAs = (token, method, path, body) =>
      fetch(`${berth.url}${path}`, {
        method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    // The graphs' own assistants have no readers: every user runs assistants of their own.
    aliceSlow = (await alice.assistants.create({ graphId: "slow", name: "alice-slow" })).assistant_id;
    aliceWhoami = (await alice.assistants.create({ graphId: "whoami", name: "alice-whoami" })).assistant_id;
    bobWhoami = (await bob.assistants.create({ graphId: "whoami", name: "bob-whoami" })).assistant_id;
    idle = (await alice.threads.create({ metadata: { topic: TOPIC } })).thread_id;
    finishedRun = (await alice.runs.create(idle, aliceSlow, { input: { steps: 1, delay_ms: 1 } })).run_id;
    await alice.runs.join(idle, finishedRun);
    busy = (await alice.threads.create({ metadata: { topic: TOPIC } })).thread_id;
    // Runs until cancelled (one step a checkpoint: the recursion limit must not end it first).
    longRun = (
      await alice.runs.create(busy, aliceSlow, {
        input: { steps: 1_000_000, delay_ms: 50 },
        config: { recursion_limit: 1_000_000 },
        streamMode: ["values", "custom"],
      })
    ).run_id;
  });

  /** A stateless run that keeps its thread (the SDK's types lack `on_completion: "keep"`), once it has ended. */
  const keptStatelessRun = async (token: string, assistantId: string, metadata: Record<string, string>) => {
    const response = await fetchAs(token, "POST", "/runs", {
      assistant_id: assistantId,
      input: {},
      on_completion: "keep",
      metadata,
    });
    assert.equal(response.status, 200);
    return (await response.json()) as Run;
  };

  after(async () => {
    await berth?.stop();
    jwks?.close();
  });

  it("refuses a missing, expired, foreign-signed or wrong-audience token with 401", async () => {
    const { privateKey: foreign } = await generateKeyPair("ES256");
    const refused = {
      missing: undefined,
      expired: await sign("alice", {}, { expires: Math.floor(Date.now() / 1000) - 600 }),
      "signed by another key": await sign("alice", {}, { key: foreign }),
      "for another audience": await sign("alice", {}, { audience: "someone-else" }),
    };
    for (const [name, token] of Object.entries(refused)) {
      const response = await fetchAs(token, "POST", "/threads/search", {});
      assert.equal(response.status, 401, name);
      await response.body?.cancel();
    }
  });

  it("gives the graph the token's sub and permissions", async () => {
    const values = (await alice.runs.wait(null, aliceWhoami, { input: {} })) as unknown as Whoami;
    assert.equal(values.user_id, "alice");
    assert.deepEqual(values.permissions, ["threads:delete", "crons:delete"]);
    const bobs = (await bob.runs.wait(null, bobWhoami, { input: {} })) as unknown as Whoami;
    assert.equal(bobs.user_id, "bob");
    assert.deepEqual(bobs.permissions, ["threads:read"]);
  });

  it("hides alice's thread from bob: get, search, count, state, history are 404 or empty, copy a 409", async () => {
    for (const threadId of [idle, busy]) await failsWith(404, bob.threads.get(threadId), "get");
    assert.deepEqual(await bob.threads.search({ metadata: { topic: TOPIC } }), []);
    assert.equal(await bob.threads.count({ metadata: { topic: TOPIC } }), 0);
    await failsWith(404, bob.threads.getState(idle), "state");
    await failsWith(404, bob.threads.getHistory(idle), "POST history");
    const history = await fetchAs(tokens.bob, "GET", `/threads/${idle}/history`);
    assert.equal(history.status, 404, "GET history");
    await history.body?.cancel();
    await failsWith(409, bob.threads.copy(idle), "copy");
  });

  it("lets bob change nothing of alice's thread: POST state, PATCH, run create are 404, a thread of the same id 409", async () => {
    await failsWith(404, bob.threads.updateState(idle, { values: { steps: 7 } }), "POST state");
    await failsWith(404, bob.threads.patchState(idle, { note: "bob's" }), "PATCH state");
    await failsWith(404, bob.threads.update(idle, { metadata: { topic: "bob's now" } }), "PATCH");
    await failsWith(404, bob.runs.create(idle, bobWhoami, { input: {} }), "run create");
    await failsWith(404, bob.runs.wait(idle, bobWhoami, { input: {}, ifNotExists: "create" }), "run create if_not_exists");
    await failsWith(409, bob.threads.create({ threadId: idle }), "create with alice's id");
    await failsWith(409, bob.threads.create({ threadId: idle, ifExists: "do_nothing" }), "do_nothing with alice's id");
    const thread = await alice.threads.get(idle);
    assert.equal(thread.metadata?.topic, TOPIC);
    assert.equal(thread.metadata?.owner, "alice");
  });

  it("hides alice's runs from bob: list, get, join, stream join, cancel, cancel many, thread stream", async () => {
    await failsWith(404, bob.runs.list(idle), "list");
    await failsWith(404, bob.runs.get(idle, finishedRun), "get");
    await failsWith(404, bob.runs.join(idle, finishedRun), "join");
    const joined = await firstPart(bob.runs.joinStream(busy, longRun, { lastEventId: "-1" }));
    assert.deepEqual(
      [joined?.event, joined?.data],
      ["error", { error: "NotFoundError", message: "404: Run not found" }],
      "stream join",
    );
    await failsWith(404, bob.runs.cancel(busy, longRun), "cancel");
    await failsWith(404, bob.runs.cancelMany({ threadId: busy, runIds: [longRun] }), "cancel many");
    await bob.runs.cancelMany({ status: "all" }); // cancels bob's runs only: he has none
    await failsWith(404, firstPart(bob.threads.joinStream(busy)), "thread stream");
    const stillRunning = await alice.runs.get(busy, longRun);
    assert.ok(["pending", "running"].includes(stillRunning.status), stillRunning.status);
  });

  it("keeps alice's thread from deleters: bob is refused by the handler (403), carol does not see it (404)", async () => {
    const byBob = await fetchAs(tokens.bob, "DELETE", `/threads/${idle}`);
    assert.equal(byBob.status, 403);
    assert.deepEqual(await byBob.json(), { detail: "Forbidden" });
    await failsWith(404, carol.threads.delete(idle), "carol delete");
    await failsWith(403, bob.runs.delete(idle, finishedRun), "bob run delete");
    await failsWith(404, carol.runs.delete(idle, finishedRun), "carol run delete");
    const pruned = await fetchAs(tokens.carol, "POST", "/threads/prune", { thread_ids: [idle], strategy: "delete" });
    assert.equal(pruned.status, 200);
    assert.deepEqual(await pruned.json(), { pruned_count: 0 });
    assert.equal((await alice.threads.get(idle)).thread_id, idle);
    assert.equal((await alice.runs.get(idle, finishedRun)).status, "success");
  });

  it("refuses bob deleting even his own thread (no threads:delete): 403, and the thread stays", async () => {
    const own = await bob.threads.create();
    const response = await fetchAs(tokens.bob, "DELETE", `/threads/${own.thread_id}`);
    assert.equal(response.status, 403);
    assert.deepEqual(await response.json(), { detail: "Forbidden" });
    assert.equal((await bob.threads.get(own.thread_id)).metadata?.owner, "bob");
  });

  it("lets alice do all of it on her thread", async () => {
    assert.deepEqual(
      (await alice.threads.search({ metadata: { topic: TOPIC } })).map((thread) => thread.thread_id).sort(),
      [idle, busy].sort(),
    );
    assert.equal(await alice.threads.count({ metadata: { topic: TOPIC } }), 2);
    assert.equal((await alice.threads.getState<{ done: number }>(idle)).values.done, 1);
    assert.ok((await alice.threads.getHistory(idle)).length > 0);
    await alice.threads.updateState(idle, { values: { steps: 7 } });
    await alice.threads.patchState(idle, { note: "hers" });
    assert.equal((await alice.threads.update(idle, { metadata: { note: "hers" } })).metadata?.note, "hers");
    const copy = await alice.threads.copy(idle);
    assert.equal(copy.metadata?.owner, "alice");
    assert.deepEqual(
      (await alice.runs.list(idle)).map((run) => run.run_id),
      [finishedRun],
    );
    assert.equal(((await alice.runs.join(idle, finishedRun)) as { done: number }).done, 1);
    assert.ok(await firstPart(alice.runs.joinStream(busy, longRun, { lastEventId: "-1" })));
    assert.ok(await firstPart(alice.threads.joinStream(busy)));
    const again = (await alice.runs.wait(idle, aliceSlow, { input: { steps: 1, delay_ms: 1 } })) as { done: number };
    assert.equal(again.done, 2, "the run went on from the thread's state");
  });

  it("lets alice cancel her long run, delete a run and delete her thread", async () => {
    await alice.runs.cancel(busy, longRun, true);
    assert.equal((await alice.runs.get(busy, longRun)).status, "interrupted");
    await alice.runs.delete(idle, finishedRun);
    await failsWith(404, alice.runs.get(idle, finishedRun));
    await alice.threads.delete(busy);
    await failsWith(404, alice.threads.get(busy));
  });

  it("stamps the creator as owner: over the client's metadata, and on the threads that runs create", async () => {
    const claimed = await alice.threads.create({ metadata: { owner: "bob" } });
    assert.equal(claimed.metadata?.owner, "alice");
    await failsWith(404, bob.threads.get(claimed.thread_id));

    const stateless = await keptStatelessRun(tokens.alice, aliceWhoami, { owner: "bob" });
    await alice.runs.join(stateless.thread_id, stateless.run_id);
    assert.equal((await alice.threads.get(stateless.thread_id)).metadata?.owner, "alice");
    await failsWith(404, bob.threads.get(stateless.thread_id));

    const fresh = randomUUID();
    await alice.runs.wait(fresh, aliceWhoami, { input: {}, ifNotExists: "create" });
    assert.equal((await alice.threads.get(fresh)).metadata?.owner, "alice");
    await failsWith(404, bob.threads.get(fresh));
  });

  // The new thread gets what the handler left on the run's metadata, not only what it changed.
  it("stamps the owner on a run's new thread also when the client sent that same owner", async () => {
    const stateless = await keptStatelessRun(tokens.alice, aliceWhoami, { owner: "alice" });
    await alice.runs.join(stateless.thread_id, stateless.run_id);
    assert.equal((await alice.threads.get(stateless.thread_id)).metadata?.owner, "alice");
    const fresh = randomUUID();
    await alice.runs.wait(fresh, aliceWhoami, { input: {}, ifNotExists: "create", metadata: { owner: "alice" } });
    assert.equal((await alice.threads.get(fresh)).metadata?.owner, "alice");
  });

  it("shares an assistant through $contains: bob sees it once alice lists him in metadata.readers", async () => {
    const shared = await alice.assistants.create({
      graphId: "whoami",
      name: "shared",
      metadata: { readers: ["mallory"], team: "blue" },
    });
    assert.deepEqual(shared.metadata?.readers, ["alice"], "the handler stamps the readers on create");
    await failsWith(404, bob.assistants.get(shared.assistant_id));
    const id = shared.assistant_id;
    await failsWith(404, bob.assistants.getSchemas(id), "schemas");
    await failsWith(404, bob.assistants.getGraph(id), "graph");
    await failsWith(404, bob.assistants.getSubgraphs(id), "subgraphs");
    await failsWith(404, bob.assistants.getVersions(id), "versions");
    await failsWith(404, bob.assistants.setLatest(id, 1), "set latest");
    await failsWith(404, bob.assistants.delete(id), "delete");
    await failsWith(409, bob.assistants.create({ graphId: "whoami", assistantId: shared.assistant_id }), "alice's id");
    await failsWith(404, bob.runs.wait(null, shared.assistant_id, { input: {} }), "a run needs assistants:read");
    assert.ok(!(await bob.assistants.search({ limit: 100 })).some((a) => a.assistant_id === shared.assistant_id));
    await failsWith(404, bob.assistants.update(shared.assistant_id, { metadata: { readers: ["bob"] } }));

    // PATCH merges metadata key by key: `readers` is replaced as a whole, the rest kept.
    const patched = await alice.assistants.update(shared.assistant_id, { metadata: { readers: ["alice", "bob"] } });
    assert.deepEqual(patched.metadata?.readers, ["alice", "bob"]);
    assert.equal(patched.metadata?.team, "blue");
    assert.equal((await bob.assistants.get(shared.assistant_id)).name, "shared");
    const values = (await bob.runs.wait(null, shared.assistant_id, { input: {} })) as unknown as Whoami;
    assert.equal(values.user_id, "bob");
    const bobSees = (await bob.assistants.search({ limit: 100 })).map((a) => a.assistant_id);
    assert.ok(bobSees.includes(shared.assistant_id));
    assert.ok(!bobSees.includes(aliceSlow) && !bobSees.includes(aliceWhoami), "alice's other assistants stay hers");
    assert.equal(await carol.assistants.count(), 0);
  });

  it("hides alice's cron from bob: get 404, not in search nor count; deleting needs crons:delete", async () => {
    const cron = await alice.crons.create(aliceWhoami, { schedule: "0 0 1 1 *", input: {} });
    assert.equal((await fetchAs(tokens.alice, "GET", `/runs/crons/${cron.cron_id}`)).status, 200);
    const byBob = await fetchAs(tokens.bob, "GET", `/runs/crons/${cron.cron_id}`);
    assert.equal(byBob.status, 404);
    await byBob.body?.cancel();
    assert.deepEqual(
      (await alice.crons.search({ assistantId: aliceWhoami })).map((c) => c.cron_id),
      [cron.cron_id],
    );
    assert.deepEqual(await bob.crons.search({ assistantId: aliceWhoami }), []);
    assert.equal(await alice.crons.count({ assistantId: aliceWhoami }), 1);
    assert.equal(await bob.crons.count({ assistantId: aliceWhoami }), 0);
    await failsWith(404, bob.crons.update(cron.cron_id, { schedule: "0 0 2 1 *" }));

    // The handler's HTTPException: its status, its message as the detail.
    const deleteByBob = await fetchAs(tokens.bob, "DELETE", `/runs/crons/${cron.cron_id}`);
    assert.equal(deleteByBob.status, 403);
    assert.deepEqual(await deleteByBob.json(), { detail: "Deleting a cron needs the crons:delete permission" });
    await failsWith(404, carol.crons.delete(cron.cron_id));
    await alice.crons.delete(cron.cron_id);
    assert.equal(await alice.crons.count({ assistantId: aliceWhoami }), 0);
  });

  it("gives each user a store of their own: same namespace and key, separate items", async () => {
    await alice.store.putItem(["notes"], "todo", { by: "alice" });
    await bob.store.putItem(["notes"], "todo", { by: "bob" });
    const hers = await alice.store.getItem(["notes"], "todo");
    assert.deepEqual(hers?.value, { by: "alice" });
    assert.deepEqual(hers?.namespace, ["alice", "notes"], "the item lives in the rewritten namespace");
    assert.deepEqual((await bob.store.getItem(["notes"], "todo"))?.value, { by: "bob" });
    assert.equal(await bob.store.getItem(["alice", "notes"], "todo"), null, "alice's full namespace is bob's too");
    assert.deepEqual(
      (await bob.store.searchItems(["notes"])).items.map((item) => item.value),
      [{ by: "bob" }],
    );
    assert.deepEqual((await alice.store.listNamespaces()).namespaces, [["alice", "notes"]]);
    assert.deepEqual((await bob.store.listNamespaces()).namespaces, [["bob", "notes"]]);
    await bob.store.deleteItem(["notes"], "todo");
    assert.deepEqual((await alice.store.getItem(["notes"], "todo"))?.value, { by: "alice" });
  });
});
