import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { type BerthProcess, startBerth } from "@berth/test-support";

const DRAFT_07 = "http://json-schema.org/draft-07/schema#";
/** The message reference the reference server's generator gives for @langchain/core 1.x. */
const BASE_MESSAGE = "BaseMessage<MessageStructure<MessageToolSet>,MessageType>";

type Schema = Record<string, unknown> & {
  properties?: Record<string, Record<string, unknown>>;
  definitions?: Record<string, Record<string, unknown>>;
};

/** The shapes the reference's API suite expects for its fixture graphs, on Berth's fixtures of the same shape. */
describe("schemas and subgraphs in the reference server's shapes", () => {
  let berth: BerthProcess;
  let client: Client;
  before(async () => {
    // A loaded CI machine may take long to build a TypeScript program: this test is not about the deadline.
    berth = await startBerth({ project: "reference-schemas", env: { BERTH_SCHEMA_RESOLVE_TIMEOUT_MS: "240000" } });
    client = new Client({ apiUrl: berth.url });
  });
  after(() => berth.stop());

  const schemasOf = async (graphId: string) => {
    const assistant = await client.assistants.create({ graphId });
    return client.assistants.getSchemas(assistant.assistant_id);
  };

  it("types messages as the reference's BaseMessage definition, and the config from its annotation", async () => {
    const schemas = await schemasOf("split_io");
    assert.ok(schemas.input_schema);
    assert.ok(schemas.output_schema);
    assert.deepEqual(schemas.config_schema, {
      type: "object",
      properties: { model_name: { type: "string" } },
      $schema: DRAFT_07,
    });
    const state = schemas.state_schema as Schema;
    assert.equal(state.type, "object");
    assert.equal(state.$schema, DRAFT_07);
    assert.deepEqual(state.properties?.messages, { type: "array", items: { $ref: `#/definitions/${BASE_MESSAGE}` } });
    const base = state.definitions?.[BASE_MESSAGE];
    assert.match(String(base?.description), /Base class for all types of messages/);
    assert.deepEqual(base?.oneOf, [{ $ref: "#/definitions/RemoveMessage" }]);
    // The one definition the union names describes any serialized message, not only a removal.
    const message = state.definitions?.RemoveMessage as Schema;
    assert.deepEqual(message.required, ["content"]);
    assert.ok((message.properties?.type?.enum as string[] | undefined)?.includes("human"), "any kind of message");
    assert.ok(message.properties?.tool_calls, "an AI message's tool calls");
  });

  it("a context annotation is both the config and the context schema", async () => {
    const schemas = await schemasOf("runtime_context");
    const context = {
      type: "object",
      properties: { provider: { type: "string", enum: ["anthropic", "openai", "unknown"] } },
      $schema: DRAFT_07,
    };
    assert.deepEqual(schemas.config_schema, context);
    assert.deepEqual(schemas.context_schema, context);
  });

  it("a StateSchema and a withLangGraph zod state mark their messages channel; a plain zod state does not", async () => {
    const stateSchema = (await schemasOf("state_schema")).state_schema as Schema;
    assert.equal(stateSchema.type, "object");
    assert.equal(stateSchema.properties?.messages?.langgraph_type, "messages");
    assert.ok(stateSchema.properties?.count);

    const registry = (await schemasOf("zod_registry")).state_schema as Schema;
    assert.equal(registry.type, "object");
    assert.equal(registry.properties?.messages?.langgraph_type, "messages");
    assert.ok(registry.properties?.count);
    assert.ok(registry.properties?.phase);

    const plain = (await schemasOf("plain_zod")).state_schema as Schema;
    assert.equal(plain.type, "object");
    assert.ok(plain.properties?.total);
    assert.ok(plain.properties?.entries);
    assert.equal("langgraph_type" in (plain.properties?.entries ?? {}), false);
  });

  it("subgraphs: keyed by namespace, each with the reference's `state` (and the SDK's `state_schema`)", async () => {
    const assistant = await client.assistants.create({ graphId: "nested" });
    assert.deepEqual(Object.keys(await client.assistants.getSubgraphs(assistant.assistant_id)), ["outer"]);
    const subgraphs = (await client.assistants.getSubgraphs(assistant.assistant_id, { recurse: true })) as unknown as Record<
      string,
      Record<string, Schema | null>
    >;
    assert.deepEqual(Object.keys(subgraphs), ["outer", "outer|inner"]);
    for (const [namespace, stage] of [
      ["outer", "outer_stage"],
      ["outer|inner", "inner_stage"],
    ] as const) {
      const [prefix] = stage.split("_");
      const state = subgraphs[namespace]?.state;
      assert.equal(state?.type, "object", namespace);
      assert.deepEqual(state?.properties?.[stage], { type: "string", enum: [`${prefix}_one`, `${prefix}_two`] });
      assert.equal(state?.properties?.messages?.type, "array");
      assert.deepEqual(subgraphs[namespace]?.state_schema, state);
      assert.deepEqual(subgraphs[namespace]?.input, subgraphs[namespace]?.input_schema);
      assert.deepEqual(subgraphs[namespace]?.output, subgraphs[namespace]?.output_schema);
      assert.equal(subgraphs[namespace]?.config, null);
    }
  });
});
