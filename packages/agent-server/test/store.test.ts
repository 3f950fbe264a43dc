import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Client } from "@langchain/langgraph-sdk";
import { type BerthProcess, FIXTURES, newDataDir, request, startBerth } from "@berth/test-support";

/** Polls until `check` holds; expiry and sweeping are clock-driven, with no event to await. */
async function until(what: string, check: () => Promise<boolean>, between?: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await between?.();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const present = async (client: Client, namespace: string[], key: string) =>
  (await client.store.getItem(namespace, key, { refreshTtl: false })) !== null;

/** Items the sweeper reported deleting, from the server's log. */
function sweptCount(berth: BerthProcess): number {
  let total = 0;
  for (const line of berth.output().split("\n")) {
    if (!line.includes("expired store items deleted")) continue;
    total += (JSON.parse(line) as { deleted: number }).deleted;
  }
  return total;
}

describe("store: the SDK's store client", () => {
  let berth: BerthProcess;
  let client: Client;
  before(async () => {
    berth = await startBerth({
      project: "store-app",
      env: { BERTH_STORE_SWEEP_SECONDS: "0.5", BERTH_INTERNAL_TRUNCATE: "1" },
    });
    client = berth.client;
  });
  after(() => berth.stop());

  it("puts, gets, replaces and deletes an item", async () => {
    const namespace = ["profiles", crypto.randomUUID()];
    assert.equal(await client.store.getItem(namespace, "me"), null, "an absent item is null, as the SDK expects");
    await client.store.putItem(namespace, "me", { name: "Ada", langs: ["en"] });
    const item = await client.store.getItem(namespace, "me");
    assert.ok(item);
    assert.deepEqual([item.namespace, item.key, item.value], [namespace, "me", { name: "Ada", langs: ["en"] }]);
    assert.ok(!Number.isNaN(Date.parse(item.createdAt)) && item.updatedAt >= item.createdAt);

    await client.store.putItem(namespace, "me", { name: "Ada Lovelace" });
    const replaced = await client.store.getItem(namespace, "me");
    assert.deepEqual(replaced?.value, { name: "Ada Lovelace" });
    assert.equal(replaced?.createdAt, item.createdAt, "a replace keeps created_at");
    assert.ok(replaced.updatedAt >= item.updatedAt);

    await client.store.deleteItem(namespace, "me");
    assert.equal(await client.store.getItem(namespace, "me"), null);
    await client.store.deleteItem(namespace, "me"); // deleting an absent item is no error
  });

  it("answers the official servers' wire shapes", async () => {
    const namespace = ["wire", crypto.randomUUID()];
    const put = await request(berth.url, "PUT", "/store/items", { namespace, key: "k", value: { a: 1 } });
    assert.deepEqual([put.status, put.body], [204, null]);
    const got = await request(berth.url, "GET", `/store/items?namespace=${namespace.join(".")}&key=k`);
    assert.equal(got.status, 200);
    assert.deepEqual(Object.keys(got.body as object).sort(), ["created_at", "key", "namespace", "updated_at", "value"]);
    const missing = await request(berth.url, "GET", `/store/items?namespace=${namespace.join(".")}&key=nope`);
    assert.deepEqual([missing.status, missing.body], [200, null]);
    const searched = await request(berth.url, "POST", "/store/items/search", { namespace_prefix: namespace });
    assert.deepEqual(
      (searched.body as { items: { score: unknown }[] }).items.map((hit) => hit.score),
      [null],
    );
    const deleted = await request(berth.url, "DELETE", "/store/items", { namespace, key: "k" });
    assert.deepEqual([deleted.status, deleted.body], [204, null]);

    const openapi = (await request(berth.url, "GET", "/openapi.json")).body as { paths: Record<string, object> };
    assert.deepEqual(Object.keys(openapi.paths["/store/items"]!).sort(), ["delete", "get", "put"]);
    assert.ok(openapi.paths["/store/items/search"] && openapi.paths["/store/namespaces"]);
  });

  it("searches under a namespace prefix with filters, paged", async () => {
    const root = ["docs", crypto.randomUUID()];
    await client.store.putItem([...root, "a"], "1", { kind: "note", n: 1 });
    await client.store.putItem([...root, "a"], "2", { kind: "note", n: 2 });
    await client.store.putItem([...root, "a"], "3", { kind: "todo", n: 3 });
    await client.store.putItem([...root, "b"], "4", { kind: "note", n: 4 });
    const ns = async (prefix: string[], options: Parameters<Client["store"]["searchItems"]>[1] = {}) =>
      (await client.store.searchItems(prefix, options)).items.map((item) => item.value.n as number).sort();

    assert.deepEqual(await ns(root), [1, 2, 3, 4]);
    assert.deepEqual(await ns([...root, "a"]), [1, 2, 3]);
    assert.deepEqual(await ns(root, { filter: { kind: "note" } }), [1, 2, 4]);
    assert.deepEqual(await ns(root, { filter: { n: { $gte: 2 }, kind: "note" } }), [2, 4]);
    assert.deepEqual(await ns(root, { filter: { kind: "none" } }), []);

    const first = await ns(root, { limit: 3 });
    const rest = await ns(root, { limit: 3, offset: 3 });
    assert.equal(first.length, 3);
    assert.deepEqual([...first, ...rest].sort(), [1, 2, 3, 4], "pages neither overlap nor skip");
    assert.equal((await client.store.searchItems(root)).items.length, 4, "the SDK's default limit is 10");
  });

  it("lists namespaces by prefix, suffix and depth, paged", async () => {
    const tag = `t${crypto.randomUUID().replaceAll("-", "")}`;
    for (const namespace of [
      [tag, "users", "u1", "prefs"],
      [tag, "users", "u2", "prefs"],
      [tag, "users", "u2", "notes"],
      [tag, "teams", "t1"],
    ]) {
      await client.store.putItem(namespace, "k", { x: 1 });
    }
    const list = async (options: Parameters<Client["store"]["listNamespaces"]>[0]) =>
      (await client.store.listNamespaces(options)).namespaces;
    const all = [
      [tag, "teams", "t1"],
      [tag, "users", "u1", "prefs"],
      [tag, "users", "u2", "notes"],
      [tag, "users", "u2", "prefs"],
    ];
    assert.deepEqual(await list({ prefix: [tag] }), all);
    assert.deepEqual(await list({ prefix: [tag, "users"], suffix: ["prefs"] }), [all[1], all[3]]);
    assert.deepEqual(await list({ prefix: [tag], maxDepth: 2 }), [
      [tag, "teams"],
      [tag, "users"],
    ]);
    assert.deepEqual(await list({ prefix: [tag], limit: 2, offset: 1 }), all.slice(1, 3));
  });

  it("refuses bad namespaces (and unknown filter operators) with 422 and the validation error shape", async () => {
    const cases: [string, string, unknown, (string | number)[]][] = [
      ["PUT", "/store/items", { namespace: ["a.b"], key: "k", value: {} }, ["body", "namespace", 0]],
      ["PUT", "/store/items", { namespace: ["ok", ""], key: "k", value: {} }, ["body", "namespace", 1]],
      ["PUT", "/store/items", { namespace: [], key: "k", value: {} }, ["body", "namespace"]],
      ["PUT", "/store/items", { namespace: ["ok"], key: "k", value: {}, ttl: 0 }, ["body", "ttl"]],
      ["GET", "/store/items?namespace=a..b&key=k", undefined, ["query", "namespace", 1]],
      ["GET", "/store/items?key=k", undefined, ["query", "namespace"]],
      ["DELETE", "/store/items", { namespace: ["x."], key: "k" }, ["body", "namespace", 0]],
      ["POST", "/store/items/search", { namespace_prefix: ["a.b"] }, ["body", "namespace_prefix", 0]],
      ["POST", "/store/namespaces", { prefix: [""] }, ["body", "prefix", 0]],
      ["POST", "/store/namespaces", { suffix: ["x.y"] }, ["body", "suffix", 0]],
      ["POST", "/store/items/search", { filter: { n: { $in: [1, 2] } } }, ["body", "filter", "n", "$in"]],
    ];
    for (const [method, path, body, loc] of cases) {
      const response = await request(berth.url, method, path, body);
      assert.equal(response.status, 422, `${method} ${path} ${JSON.stringify(body)}`);
      const detail = (response.body as { detail: { loc: unknown; msg: unknown; type: unknown }[] }).detail;
      assert.deepEqual(detail[0]?.loc, loc);
      assert.equal(typeof detail[0]?.msg, "string");
      assert.equal(typeof detail[0]?.type, "string");
    }
  });

  it("ranks by meaning with the project's embedder, honouring each put's index", async () => {
    const namespace = ["kb", crypto.randomUUID()];
    await client.store.putItem(namespace, "pizza", { text: "I love pizza with melted cheese" });
    await client.store.putItem(namespace, "rain", { text: "The weather is rainy and cold today" });
    await client.store.putItem(namespace, "cats", { text: "Cats sleep all day on the sofa" });
    await client.store.putItem(namespace, "hidden", { text: "cheese pizza cheese pizza" }, { index: false });
    await client.store.putItem(namespace, "titled", { title: "rainy weather forecast", text: "zzz" }, { index: ["title"] });

    const pizza = (await client.store.searchItems(namespace, { query: "cheese pizza" })).items;
    assert.equal(pizza[0]?.key, "pizza");
    assert.ok(!pizza.some((item) => item.key === "hidden"), "an item put with index: false is not found by meaning");
    const scores = pizza.map((item) => item.score as number);
    assert.ok(scores.every((score) => typeof score === "number"));
    assert.deepEqual(
      scores,
      [...scores].sort((a, b) => b - a),
      "best first",
    );

    const weather = (await client.store.searchItems(namespace, { query: "rainy weather", limit: 2 })).items;
    assert.deepEqual(
      weather.map((item) => item.key),
      ["titled", "rain"],
      "the put's own index fields are what was embedded",
    );
    const filtered = await client.store.searchItems(namespace, { query: "cheese pizza", filter: { text: "zzz" } });
    assert.deepEqual(
      filtered.items.map((item) => item.key),
      ["titled"],
    );
  });

  it("fails a put or search whose embedding fails with 502, writing nothing", async () => {
    const namespace = ["kb", crypto.randomUUID()];
    const put = await request(berth.url, "PUT", "/store/items", { namespace, key: "x", value: { text: "__fail_embedding__" } });
    assert.equal(put.status, 502);
    assert.match((put.body as { detail: string }).detail, /Embedding failed: .*refuses this text on purpose/);
    assert.equal(await client.store.getItem(namespace, "x"), null);
    const search = await request(berth.url, "POST", "/store/items/search", {
      namespace_prefix: namespace,
      query: "__fail_embedding__",
    });
    assert.equal(search.status, 502);
  });

  it("shares memories across threads: a graph writes in one thread and reads and searches in another", async () => {
    const user = crypto.randomUUID();
    const namespace = ["memories", user];
    const [a, b] = [await client.threads.create(), await client.threads.create()];
    await client.runs.wait(a.thread_id, "memory", {
      input: { action: "remember", user, key: "food", text: "my favourite food is pizza with cheese" },
    });
    await client.store.putItem(namespace, "pet", { text: "my cat is called Tom" });

    const recalled = (await client.runs.wait(b.thread_id, "memory", {
      input: { action: "recall", user, key: "food", query: "which food do I like, pizza" },
    })) as { recalled: string; hits: { key: string; text: string; score: number }[] };
    assert.equal(recalled.recalled, "my favourite food is pizza with cheese");
    assert.deepEqual(
      recalled.hits.map((hit) => hit.key),
      ["food", "pet"],
      "the graph's search sees what the API put, ranked",
    );
    assert.ok(recalled.hits.every((hit) => typeof hit.score === "number"));
    const viaApi = await client.store.getItem(namespace, "food");
    assert.deepEqual(viaApi?.value, { text: "my favourite food is pizza with cheese" }, "the API sees what the graph put");
  });

  it("expires an item after its ttl", async () => {
    const namespace = ["ttl", crypto.randomUUID()];
    await client.store.putItem(namespace, "short", { text: "short lived" }, { ttl: 0.05 });
    await client.store.putItem(namespace, "forever", { text: "no ttl" }, { ttl: null });
    await until("the item expires", async () => !(await present(client, namespace, "short")));
    assert.deepEqual(
      (await client.store.searchItems(namespace, { refreshTtl: false })).items.map((item) => item.key),
      ["forever"],
    );
  });

  it("refreshes ttls on get and search (refresh_on_read), unless the read says refresh_ttl false", async () => {
    const root = crypto.randomUUID();
    const [got, searched, lapsing] = [
      ["ttl", root, "got"],
      ["ttl", root, "searched"],
      ["ttl", root, "lapsing"],
    ];
    await client.store.putItem(got, "k", { v: 1 }, { ttl: 0.05 });
    await client.store.putItem(searched, "k", { v: 2 }, { ttl: 0.05 });
    await client.store.putItem(lapsing, "k", { v: 3 }, { ttl: 0.05 });
    await until(
      "the item read without refresh expires",
      async () => !(await present(client, lapsing, "k")),
      async () => {
        await client.store.getItem(got, "k");
        await client.store.searchItems(searched);
      },
    );
    assert.ok(await present(client, got, "k"), "gets pushed its expiry");
    assert.ok(await present(client, searched, "k"), "searches pushed its expiry");
  });

  it("keeps namespaces apart under concurrent puts", async () => {
    const root = crypto.randomUUID();
    const owners = ["u0", "u1", "u2", "u3"];
    await Promise.all(
      owners.flatMap((owner) =>
        Array.from({ length: 10 }, (_, i) => client.store.putItem(["iso", root, owner], `k${i}`, { owner, i })),
      ),
    );
    for (const owner of owners) {
      const items = (await client.store.searchItems(["iso", root, owner], { limit: 100 })).items;
      assert.equal(items.length, 10, owner);
      assert.ok(items.every((item) => item.value.owner === owner && item.namespace.at(-1) === owner));
      const one = await client.store.getItem(["iso", root, owner], "k7");
      assert.deepEqual(one?.value, { owner, i: 7 });
    }
    assert.equal((await client.store.searchItems(["iso", root], { limit: 100 })).items.length, 40);
  });

  it("is emptied by POST /internal/truncate with store: true (last: it empties everything)", async () => {
    await client.store.putItem(["doomed", crypto.randomUUID()], "k", { text: "soon gone" });
    const kept = await request(berth.url, "POST", "/internal/truncate", { threads: true });
    assert.equal(kept.status, 200);
    assert.ok((await client.store.searchItems([])).items.length > 0, "other flags leave the store alone");
    const emptied = await request(berth.url, "POST", "/internal/truncate", { store: true });
    assert.equal(emptied.status, 200);
    assert.deepEqual((await client.store.searchItems([])).items, []);
    assert.deepEqual((await client.store.listNamespaces()).namespaces, []);
  });
});

describe("store: ttl defaults and the sweeper", () => {
  let berth: BerthProcess;
  let client: Client;
  /** Items this server was given that expire: the sweeper must delete them all. */
  let expiring = 0;
  before(async () => {
    // A project beside the fixture: its graph, a default ttl, no refresh on read, no index.
    const project = newDataDir("berth-store-ttl-");
    const config = {
      graphs: { memory: join(FIXTURES, "store-app", "graph.ts:graph") },
      store: { ttl: { default_ttl: 0.05, refresh_on_read: false } },
    };
    writeFileSync(join(project, "langgraph.json"), JSON.stringify(config));
    berth = await startBerth({ project, env: { BERTH_STORE_SWEEP_SECONDS: "0.2" } });
    client = berth.client;
  });
  after(() => berth.stop());

  it("gives puts without a ttl the default one; ttl null never expires", async () => {
    const namespace = ["defaults", crypto.randomUUID()];
    await client.store.putItem(namespace, "default", { text: "default ttl" });
    await client.store.putItem(namespace, "forever", { text: "kept" }, { ttl: null });
    expiring += 1;
    await until("the default ttl lapses", async () => !(await present(client, namespace, "default")));
    assert.ok(await present(client, namespace, "forever"));
  });

  it("does not refresh on read when refresh_on_read is false, unless the read asks", async () => {
    const namespace = ["norefresh", crypto.randomUUID()];
    await client.store.putItem(namespace, "plain", { v: 1 });
    await client.store.putItem(namespace, "asked", { v: 2 });
    expiring += 1; // "asked" is refreshed until the end of this test, then lapses too
    expiring += 1;
    await until(
      "the item read with the server's default expires",
      async () => (await client.store.getItem(namespace, "plain")) === null,
      async () => {
        await client.store.getItem(namespace, "asked", { refreshTtl: true });
      },
    );
    assert.ok(await present(client, namespace, "asked"));
  });

  it("ignores a query without store.index: filter-only search", async () => {
    const namespace = ["plain", crypto.randomUUID()];
    await client.store.putItem(namespace, "a", { text: "alpha", kind: "x" }, { ttl: null });
    await client.store.putItem(namespace, "b", { text: "beta", kind: "y" }, { ttl: null });
    const items = (await client.store.searchItems(namespace, { query: "beta", filter: { kind: "x" } })).items;
    assert.deepEqual(
      items.map((item) => [item.key, item.score]),
      [["a", null]],
    );
  });

  it("sweeps expired items out of the database, in every process", async () => {
    const namespace = ["sweep", crypto.randomUUID()];
    for (const key of ["s1", "s2", "s3"]) await client.store.putItem(namespace, key, { key }, { ttl: 0.01 });
    expiring += 3;
    await until(`the sweeper reports ${expiring} deletions`, async () => sweptCount(berth) >= expiring);
    assert.equal(sweptCount(berth), expiring);
    assert.equal((await client.store.searchItems(namespace)).items.length, 0);
  });
});
