// Resource handlers as the reference server's own auth suite writes them (fixture reference-auth): an owner filter on
// threads and assistants together, a store filtered by `{namespace: {$contains: identity}}`, creating a thread behind a
// permission. Runs go through their thread, the store applies the filter, a copy takes read and create.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type BerthProcess, startBerth } from "@berth/test-support";

/** Asserts the SDK call fails with `status`. */
const failsWith = (status: number, call: Promise<unknown>, message?: string) =>
  assert.rejects(call, (error: { status?: number }) => {
    assert.equal(error.status, status, message);
    return true;
  });

async function gather<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

interface Remembered {
  text: string;
  remembered: string;
}

describe("resource handlers as the reference's auth suite writes them", { timeout: 120_000 }, () => {
  let berth: BerthProcess;
  const token = (identity: string, scopes: string[]) => `${identity} ${scopes.join(",")}`;
  const clientOf = (identity: string, scopes: string[]) =>
    new Client({ apiUrl: berth.url, defaultHeaders: { authorization: `Bearer ${token(identity, scopes)}` } });
  const fetchAs = (identity: string, scopes: string[], method: string, path: string) =>
    fetch(`${berth.url}${path}`, { method, headers: { authorization: `Bearer ${token(identity, scopes)}` } });
  let alice: Client;
  let bob: Client;

  before(async () => {
    berth = await startBerth({ project: "reference-auth" });
    alice = clientOf("alice", ["me", "assistants:write"]);
    bob = clientOf("bob", ["me"]);
  });

  after(async () => {
    await berth?.stop();
  });

  it("runs a graph by its id on the user's thread and statelessly, though the filter hides its assistant", async () => {
    const thread = await alice.threads.create();
    const values = (await alice.runs.wait(thread.thread_id, "agent", {
      input: { text: "on a thread" },
    })) as unknown as Remembered;
    assert.equal(values.text, "on a thread");
    const stateless = (await alice.runs.wait(null, "agent", { input: { text: "stateless" } })) as unknown as Remembered;
    assert.equal(stateless.text, "stateless");
    // The graph's assistant has no owner: the filter keeps it out of the user's searches and reads all the same.
    assert.deepEqual(await alice.assistants.search({ graphId: "agent" }), []);
    await failsWith(404, alice.assistants.get("agent"), "get the graph's assistant");
    assert.equal((await alice.threads.get(thread.thread_id)).metadata?.owner, "alice");
  });

  it("keeps another user's thread, its runs and assistants out of reach: 404", async () => {
    const thread = await alice.threads.create();
    const run = await alice.runs.create(thread.thread_id, "agent", { input: { text: "hers" }, afterSeconds: 100 });
    await failsWith(404, bob.runs.wait(thread.thread_id, "agent", { input: { text: "his" } }), "run on her thread");
    await failsWith(404, bob.runs.create(thread.thread_id, "agent", { input: {}, ifNotExists: "create" }), "if_not_exists");
    await failsWith(404, bob.runs.list(thread.thread_id), "list");
    await failsWith(404, bob.runs.get(thread.thread_id, run.run_id), "get");
    await failsWith(404, bob.runs.cancel(thread.thread_id, run.run_id), "cancel");
    await alice.runs.cancel(thread.thread_id, run.run_id);
    // An assistant a user created stays theirs to run: the graphs' own are everyone's, hers are not.
    const hers = await alice.assistants.create({ graphId: "agent" });
    await failsWith(404, bob.runs.wait(null, hers.assistant_id, { input: { text: "his" } }), "her assistant");
    assert.equal(
      ((await alice.runs.wait(null, hers.assistant_id, { input: { text: "mine" } })) as unknown as Remembered).text,
      "mine",
    );
  });

  it("answers joining the stream of a run the user cannot see with one 404 error event, as for no run at all", async () => {
    const thread = await alice.threads.create();
    const hers = await alice.assistants.create({ graphId: "agent" });
    const run = await alice.runs.create(thread.thread_id, hers.assistant_id, { input: { text: "hers" }, afterSeconds: 100 });
    const hidden = await gather(bob.runs.joinStream(thread.thread_id, run.run_id));
    const missing = await gather(alice.runs.joinStream(thread.thread_id, randomUUID()));
    for (const events of [hidden, missing]) {
      assert.equal(events.length, 1, JSON.stringify(events));
      assert.equal(events[0]!.event, "error");
      assert.match((events[0]!.data as { message: string }).message, /404/);
    }
    assert.deepEqual(hidden, missing);
    await alice.runs.cancel(thread.thread_id, run.run_id);
  });

  it("applies a store handler's filter: each user finds only the items whose namespace holds them", async () => {
    const carol = clientOf("carol", ["me"]);
    const dave = clientOf("dave", ["me"]);
    await carol.store.putItem(["carol"], "a", { n: 1 });
    await carol.store.putItem(["carol", "notes"], "b", { n: 2 });
    await dave.store.putItem(["dave"], "a", { n: 3 });
    assert.deepEqual((await carol.store.getItem(["carol"], "a"))?.value, { n: 1 });
    assert.deepEqual((await carol.store.searchItems([])).items.map((item) => [item.namespace, item.key]).sort(), [
      [["carol"], "a"],
      [["carol", "notes"], "b"],
    ]);
    assert.deepEqual((await carol.store.searchItems([], { limit: 1, offset: 1 })).items.length, 1);
    assert.deepEqual((await carol.store.listNamespaces()).namespaces.sort(), [["carol"], ["carol", "notes"]]);
    assert.deepEqual((await dave.store.listNamespaces()).namespaces, [["dave"]]);
    assert.deepEqual(
      (await dave.store.searchItems([])).items.map((item) => item.value),
      [{ n: 3 }],
    );
    // A namespace without the user is the handler's 403.
    await failsWith(403, carol.store.getItem(["dave"], "a"), "get");
    await failsWith(403, carol.store.putItem(["dave"], "a", { n: 0 }), "put");
    await failsWith(403, carol.store.deleteItem(["dave"], "a"), "delete");
    await failsWith(403, carol.store.searchItems(["dave"]), "search");
    await failsWith(403, carol.store.listNamespaces({ prefix: ["dave"] }), "namespaces");
    await carol.store.deleteItem(["carol"], "a");
    assert.equal(await carol.store.getItem(["carol"], "a"), null);
    assert.deepEqual((await dave.store.getItem(["dave"], "a"))?.value, { n: 3 });
  });

  it("lets a graph write the store under its user, each user reading their own", async () => {
    const erin = clientOf("erin", ["me"]);
    const frank = clientOf("frank", ["me"]);
    const [erinThread, frankThread] = await Promise.all([erin.threads.create(), frank.threads.create()]);
    await Promise.all([
      erin.runs.wait(erinThread.thread_id, "agent", { input: { text: "erin's" } }),
      frank.runs.wait(frankThread.thread_id, "agent", { input: { text: "frank's" } }),
    ]);
    assert.deepEqual((await erin.store.getItem(["erin"], "note"))?.value, { text: "erin's" });
    assert.deepEqual(
      (await frank.store.searchItems([])).items.map((item) => item.value),
      [{ text: "frank's" }],
    );
  });

  it("copies a thread only with read on it and create of the copy", async () => {
    const thread = await alice.threads.create({ metadata: { topic: "copied" } });
    // Another user's thread and a missing one are the same 409.
    const hidden = await fetchAs("bob", ["me"], "POST", `/threads/${thread.thread_id}/copy`);
    const missing = await fetchAs("bob", ["me"], "POST", `/threads/${randomUUID()}/copy`);
    assert.equal(hidden.status, 409);
    assert.equal(missing.status, 409);
    assert.deepEqual(await hidden.json(), await missing.json());
    // Reading is not enough: the copy is a thread to create.
    const reader = clientOf("alice", ["threads:read"]);
    assert.equal((await reader.threads.get(thread.thread_id)).thread_id, thread.thread_id);
    const refused = await fetchAs("alice", ["threads:read"], "POST", `/threads/${thread.thread_id}/copy`);
    assert.equal(refused.status, 403);
    assert.deepEqual(await refused.json(), { detail: "Not authorized" });
    const copy = await alice.threads.copy(thread.thread_id);
    assert.notEqual(copy.thread_id, thread.thread_id);
    assert.deepEqual(copy.metadata, { topic: "copied", owner: "alice" });
  });
});
