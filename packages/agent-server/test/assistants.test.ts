import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, request, runBerthExpectingFailure, startBerth } from "@berth/test-support";

const AGENT_ASSISTANT_ID = "fe096781-5601-53d2-b2f6-0d3403f7e9ca"; // uuid5("agent", 6ba7b821-...)

describe("assistants", () => {
  let berth: BerthProcess;
  before(async () => {
    berth = await startBerth();
  });
  after(() => berth.stop());

  it("creates one system assistant per graph, addressable by graph id", async () => {
    const byGraphId = await berth.client.assistants.get("agent");
    assert.equal(byGraphId.assistant_id, AGENT_ASSISTANT_ID);
    assert.equal(byGraphId.name, "agent");
    assert.equal(byGraphId.graph_id, "agent");
    assert.deepEqual(byGraphId.metadata, { created_by: "system" });
    const system = await berth.client.assistants.search({ metadata: { created_by: "system" }, limit: 100 });
    assert.deepEqual(system.map((assistant) => assistant.graph_id).sort(), [
      "agent",
      "blocking",
      "chat",
      "default_export",
      "factory",
      "failing",
      "hitl",
      "nested",
      "plain_js",
      "promised",
      "slow",
      "uncompiled",
      "zod_state",
    ]);
    const described = system.find((assistant) => assistant.graph_id === "plain_js");
    assert.equal(described?.description, "A graph written in plain JavaScript");
  });

  it("creates, gets, patches and deletes an assistant", async () => {
    const created = await berth.client.assistants.create({
      graphId: "agent",
      name: "support bot",
      config: { configurable: { tone: "dry" } },
      context: { locale: "fr" },
      metadata: { team: "support" },
      description: "answers questions",
    });
    assert.equal(created.version, 1);
    assert.equal(created.name, "support bot");
    assert.deepEqual(created.context, { locale: "fr" });
    assert.deepEqual(await berth.client.assistants.get(created.assistant_id), created);

    const patched = await berth.client.assistants.update(created.assistant_id, { metadata: { tier: "gold" } });
    assert.equal(patched.version, 2);
    assert.deepEqual(patched.metadata, { team: "support", tier: "gold" });
    assert.deepEqual(patched.config, { configurable: { tone: "dry" } });

    await berth.client.assistants.delete(created.assistant_id);
    const missing = await request(berth.url, "GET", `/assistants/${created.assistant_id}`);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { detail: "Assistant not found" });
  });

  it("honours if_exists on create", async () => {
    const assistantId = crypto.randomUUID();
    const first = await berth.client.assistants.create({ graphId: "agent", assistantId, name: "one" });
    const again = await berth.client.assistants.create({ graphId: "agent", assistantId, ifExists: "do_nothing", name: "two" });
    assert.deepEqual(again, first);
    const conflict = await request(berth.url, "POST", "/assistants", { graph_id: "agent", assistant_id: assistantId });
    assert.equal(conflict.status, 409);
    assert.deepEqual(conflict.body, { detail: "Assistant already exists" });
  });

  it("searches by graph, name substring and metadata, sorts and pages with X-Pagination-Total", async () => {
    const marker = crypto.randomUUID();
    for (const name of ["Alpha helper", "beta helper", "Gamma"]) {
      await berth.client.assistants.create({ graphId: "hitl", name, metadata: { marker } });
    }
    const helpers = await berth.client.assistants.search({ name: "HELPER", metadata: { marker } });
    assert.deepEqual(helpers.map((a) => a.name).sort(), ["Alpha helper", "beta helper"]);

    const byNameAsc = await berth.client.assistants.search({ metadata: { marker }, sortBy: "name", sortOrder: "asc" });
    assert.deepEqual(
      byNameAsc.map((a) => a.name),
      ["Alpha helper", "Gamma", "beta helper"],
    );
    const byNameDesc = await berth.client.assistants.search({ metadata: { marker }, sortBy: "name", sortOrder: "desc" });
    assert.deepEqual(
      byNameDesc.map((a) => a.name),
      ["beta helper", "Gamma", "Alpha helper"],
    );

    const page = await request(berth.url, "POST", "/assistants/search", {
      metadata: { marker },
      limit: 2,
      offset: 0,
      sort_by: "name",
      sort_order: "asc",
    });
    assert.equal(page.headers.get("x-pagination-total"), "3");
    assert.equal(page.headers.get("x-pagination-next"), "2");
    assert.equal((page.body as unknown[]).length, 2);
    const last = await berth.client.assistants.search({
      metadata: { marker },
      limit: 2,
      offset: 2,
      sortBy: "name",
      sortOrder: "asc",
    });
    assert.deepEqual(
      last.map((a) => a.name),
      ["beta helper"],
    );

    assert.equal(await berth.client.assistants.count({ metadata: { marker } }), 3);
    assert.equal(await berth.client.assistants.count({ metadata: { marker }, name: "gamma" }), 1);
    const byGraph = await berth.client.assistants.search({ graphId: "hitl", metadata: { marker } });
    assert.equal(byGraph.length, 3);
  });

  it("keeps versions, lists them newest first and restores one as latest", async () => {
    const assistant = await berth.client.assistants.create({ graphId: "agent", name: "v1", metadata: { step: 1 } });
    await berth.client.assistants.update(assistant.assistant_id, { name: "v2", metadata: { step: 2 } });
    await berth.client.assistants.update(assistant.assistant_id, { name: "v3" });
    const versions = await berth.client.assistants.getVersions(assistant.assistant_id);
    assert.deepEqual(
      versions.map((v) => [v.version, v.name]),
      [
        [3, "v3"],
        [2, "v2"],
        [1, "v1"],
      ],
    );
    const filtered = await berth.client.assistants.getVersions(assistant.assistant_id, { metadata: { step: 1 } });
    assert.deepEqual(
      filtered.map((v) => v.version),
      [1],
    );

    const restored = await berth.client.assistants.setLatest(assistant.assistant_id, 1);
    assert.equal(restored.version, 1);
    assert.equal(restored.name, "v1");
    assert.equal((await berth.client.assistants.get(assistant.assistant_id)).name, "v1");
    const missing = await request(berth.url, "POST", `/assistants/${assistant.assistant_id}/latest`, { version: 9 });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { detail: "Assistant version not found" });
  });

  it("draws the graph", async () => {
    const drawing = await berth.client.assistants.getGraph("agent");
    assert.deepEqual(
      drawing.nodes.map((node) => node.id),
      ["__start__", "respond", "__end__"],
    );
    assert.deepEqual(
      drawing.edges.map((edge) => [edge.source, edge.target]),
      [
        ["__start__", "respond"],
        ["respond", "__end__"],
      ],
    );
    const xray = await berth.client.assistants.getGraph("nested", { xray: 1 });
    assert.ok(xray.nodes.some((node) => node.id === "child"));
  });

  it("builds a factory graph from the assistant's config", async () => {
    const assistant = await berth.client.assistants.create({
      graphId: "factory",
      config: { configurable: { node_name: "custom_step" } },
    });
    const drawing = await berth.client.assistants.getGraph(assistant.assistant_id);
    assert.ok(drawing.nodes.some((node) => node.id === "custom_step"));
    const systemDrawing = await berth.client.assistants.getGraph("factory");
    assert.ok(systemDrawing.nodes.some((node) => node.id === "default_node"));
  });

  it("serves JSON schemas from the graph's runtime schema", async () => {
    const zod = await berth.client.assistants.getSchemas("zod_state");
    assert.equal(zod.graph_id, "zod_state");
    const state = zod.state_schema as { properties: Record<string, { type?: string; description?: string }> };
    assert.equal(state.properties.topic.type, "string");
    assert.equal(state.properties.topic.description, "What to write about");
    const annotation = await berth.client.assistants.getSchemas("agent");
    assert.deepEqual(Object.keys((annotation.state_schema as { properties: object }).properties), ["messages"]);
    assert.ok("context_schema" in annotation);
  });

  it("lists subgraphs by namespace", async () => {
    const subgraphs = await berth.client.assistants.getSubgraphs("nested");
    assert.deepEqual(Object.keys(subgraphs), ["child"]);
    const none = await berth.client.assistants.getSubgraphs("agent");
    assert.deepEqual(none, {});
    const byNamespace = await berth.client.assistants.getSubgraphs("nested", { namespace: "child" });
    assert.deepEqual(Object.keys(byNamespace), ["child"]);
  });

  it("deletes an assistant's threads with delete_threads", async () => {
    const assistant = await berth.client.assistants.create({ graphId: "agent" });
    const owned = await berth.client.threads.create({ metadata: { assistant_id: assistant.assistant_id } });
    const other = await berth.client.threads.create({ metadata: { assistant_id: crypto.randomUUID() } });
    await berth.client.assistants.delete(assistant.assistant_id, { deleteThreads: true });
    assert.equal((await request(berth.url, "GET", `/threads/${owned.thread_id}`)).status, 404);
    assert.equal((await request(berth.url, "GET", `/threads/${other.thread_id}`)).status, 200);
  });
});

describe("LANGGRAPH_CONFIG: the system assistants' default config and context", () => {
  const defaults = (nodeName: string) =>
    JSON.stringify({ factory: { configurable: { node_name: nodeName }, tags: ["from-env"], context: { tenant: "acme" } } });

  it("sets them at start, and a restart with other values makes a new version", async () => {
    let berth = await startBerth({ env: { LANGGRAPH_CONFIG: defaults("from_env") } });
    const dataDir = berth.dataDir;
    try {
      const assistant = await berth.client.assistants.get("factory");
      assert.deepEqual(assistant.config, { configurable: { node_name: "from_env" }, tags: ["from-env"] });
      assert.deepEqual(assistant.context, { tenant: "acme" });
      assert.equal(assistant.version, 1);
      const nodes = (await berth.client.assistants.getGraph("factory")).nodes.map((node) => node.id);
      assert.ok(nodes.includes("from_env"), nodes.join(","));
      const untouched = await berth.client.assistants.get("agent");
      assert.deepEqual([untouched.config, untouched.context], [{}, {}]);
    } finally {
      await berth.stop();
    }
    berth = await startBerth({ dataDir, env: { LANGGRAPH_CONFIG: defaults("changed") } });
    try {
      const assistant = await berth.client.assistants.get("factory");
      assert.deepEqual(assistant.config.configurable, { node_name: "changed" });
      assert.equal(assistant.version, 2);
    } finally {
      await berth.stop();
    }
  });

  it("refuses to start on a LANGGRAPH_CONFIG that is not a JSON object of graph configs", async () => {
    const notJson = await runBerthExpectingFailure({ env: { LANGGRAPH_CONFIG: "{nope" } });
    assert.equal(notJson.code, 1);
    assert.match(notJson.output, /LANGGRAPH_CONFIG is not valid JSON/);
    const wrongShape = await runBerthExpectingFailure({ env: { LANGGRAPH_CONFIG: '{"factory": 3}' } });
    assert.equal(wrongShape.code, 1);
    assert.match(wrongShape.output, /LANGGRAPH_CONFIG must be a JSON object of graph ids to configs/);
  });
});
