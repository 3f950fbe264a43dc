import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type BerthProcess, newDataDir, request, startBerth } from "@berth/test-support";

const DRAFT_07 = "http://json-schema.org/draft-07/schema#";
const ZOD_DRAFT = "https://json-schema.org/draft/2020-12/schema";
const BASE_MESSAGE = "BaseMessage<MessageStructure<MessageToolSet>,MessageType>";
const MESSAGES = { type: "array", items: { $ref: `#/definitions/${BASE_MESSAGE}` } };

type Schema = Record<string, unknown> & { definitions?: Record<string, Record<string, unknown>> };
type Schemas = Record<"input_schema" | "output_schema" | "state_schema" | "config_schema" | "context_schema", Schema | null>;

/** The annotated fixture's state fields, as the TypeScript types describe them. */
const ANNOTATED_PROPERTIES = {
  topic: { type: "string", description: "What the conversation is about" },
  count: { type: "number" },
  done: { type: "boolean" },
  mood: { type: "string", enum: ["happy", "neutral", "sad"] },
  note: { type: "string" },
  tags: { type: "array", items: { type: "string" } },
  profile: {
    type: "object",
    properties: { name: { type: "string" }, age: { type: "number" }, address: { $ref: "#/definitions/Address" } },
    required: ["address", "name"],
  },
  scores: { type: "object", additionalProperties: { type: "number" } },
  messages: MESSAGES,
};

const ADDRESS = { type: "object", properties: { city: { type: "string" }, zip: { type: "string" } }, required: ["city"] };

/** The schema without its definitions, which are checked on their own. */
function body(schema: Schema | null | undefined): Schema {
  assert.ok(schema, "expected a schema, got null");
  const { definitions: _definitions, ...rest } = schema;
  return rest;
}

/** Log lines are written in batches: wait a little for one to show. */
async function assertLogged(berth: BerthProcess, pattern: RegExp): Promise<void> {
  for (const deadline = Date.now() + 5_000; !pattern.test(berth.output()) && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.match(berth.output(), pattern);
}

function assertMessageDefinitions(schema: Schema | null): void {
  const definitions = schema?.definitions ?? {};
  assert.deepEqual(definitions[BASE_MESSAGE]?.oneOf, [{ $ref: "#/definitions/RemoveMessage" }]);
  const message = definitions.RemoveMessage?.properties as Record<string, { enum?: string[] }> | undefined;
  assert.ok(message?.type?.enum?.includes("human"), "the definition takes every kind of message");
}

describe("schemas from TypeScript types and runtime schemas", () => {
  const dataDir = newDataDir();
  // The cache lives under the server's data directory by default (the restart below reuses it).
  const env = {
    // A loaded CI machine may take long to build a TypeScript program: this test is not about the deadline.
    BERTH_SCHEMA_RESOLVE_TIMEOUT_MS: "120000",
  };
  let berth: BerthProcess;
  const schemasOf = async (graphId: string) =>
    (await request(berth.url, "GET", `/assistants/${graphId}/schemas`)).body as Schemas;

  before(async () => {
    berth = await startBerth({ project: "typed-schemas", dataDir, env });
  });
  after(() => berth.stop());

  it("reads an Annotation.Root state and config from their TypeScript types", async () => {
    const schemas = await schemasOf("annotated");
    assert.deepEqual(body(schemas.state_schema), { type: "object", properties: ANNOTATED_PROPERTIES, $schema: DRAFT_07 });
    assert.deepEqual(schemas.state_schema?.definitions?.Address, ADDRESS);
    assertMessageDefinitions(schemas.state_schema);
    assert.deepEqual(schemas.input_schema, schemas.state_schema);
    assert.deepEqual(body(schemas.output_schema), {
      type: "object",
      properties: ANNOTATED_PROPERTIES,
      required: ["count", "done", "messages", "mood", "profile", "scores", "tags", "topic"],
      $schema: DRAFT_07,
    });
    const config = {
      type: "object",
      properties: { model: { type: "string", enum: ["large", "small"] }, temperature: { type: "number" } },
      $schema: DRAFT_07,
    };
    assert.deepEqual(schemas.config_schema, config);
    assert.deepEqual(schemas.context_schema, config);
  });

  it("serves a zod state's and context's runtime schemas", async () => {
    const schemas = await schemasOf("zod_context");
    const properties = { question: { type: "string", description: "What the user asks" }, answer: { type: "string" } };
    assert.deepEqual(schemas.state_schema, { $schema: ZOD_DRAFT, type: "object", properties, additionalProperties: false });
    assert.deepEqual(schemas.output_schema, {
      $schema: ZOD_DRAFT,
      type: "object",
      properties,
      required: ["question"],
      additionalProperties: false,
    });
    const context = {
      $schema: ZOD_DRAFT,
      type: "object",
      properties: { user_id: { type: "string" }, locale: { type: "string", enum: ["en", "fr"] } },
      required: ["user_id", "locale"],
      additionalProperties: false,
    };
    assert.deepEqual(schemas.config_schema, context);
    assert.deepEqual(schemas.context_schema, context);
  });

  it("gives a narrower input and output their own schemas", async () => {
    const schemas = await schemasOf("input_output");
    assert.deepEqual(schemas.input_schema, { type: "object", properties: { query: { type: "string" } }, $schema: DRAFT_07 });
    assert.deepEqual(schemas.output_schema, {
      type: "object",
      properties: { result: { type: "array", items: { type: "string" } } },
      required: ["result"],
      $schema: DRAFT_07,
    });
    assert.deepEqual(Object.keys((schemas.state_schema?.properties as object) ?? {}).sort(), ["attempts", "query", "result"]);
    assert.equal(schemas.config_schema, null);
  });

  it("types subgraphs by namespace: an Annotation child from its types, a zod child from its runtime schema", async () => {
    const subgraphs = (await request(berth.url, "GET", "/assistants/parent/subgraphs")).body as Record<string, Schemas>;
    assert.deepEqual(Object.keys(subgraphs).sort(), ["child", "zod_child"]);
    const childProperties = {
      log: { type: "array", items: { type: "string" } },
      stage: { type: "string", enum: ["draft", "final"] },
    };
    assert.deepEqual(subgraphs.child!.state_schema, { type: "object", properties: childProperties, $schema: DRAFT_07 });
    assert.deepEqual(subgraphs.child!.output_schema, {
      type: "object",
      properties: childProperties,
      required: ["log", "stage"],
      $schema: DRAFT_07,
    });
    assert.deepEqual(subgraphs.zod_child!.state_schema, {
      $schema: ZOD_DRAFT,
      type: "object",
      properties: { log: { type: "array", items: { type: "string" } }, score: { type: "number" } },
      additionalProperties: false,
    });
    const one = (await request(berth.url, "GET", "/assistants/parent/subgraphs/child")).body as Record<string, Schemas>;
    assert.deepEqual(one, { child: subgraphs.child });
  });

  it("keeps the channel names of a plain JavaScript graph", async () => {
    const schemas = await schemasOf("plain_js");
    assert.deepEqual(schemas.state_schema, { type: "object", properties: { text: {} } });
    assert.equal(schemas.config_schema, null);
  });

  it("reads the schemas from the disk cache on the next start", async () => {
    const first = await schemasOf("annotated");
    await assertLogged(berth, /"graph_id":"annotated"[^\n]*"msg":"schemas read from types"/);
    await berth.stop();
    berth = await startBerth({ project: "typed-schemas", dataDir, env });
    assert.deepEqual(await schemasOf("annotated"), first);
    await assertLogged(berth, /"graph_id":"annotated"[^\n]*"msg":"schemas read from cache"/);
    assert.doesNotMatch(berth.output(), /"msg":"schemas read from types"/);
  });
});

describe("schemas when the types cannot be read in time", () => {
  it("falls back to the channel names and says why", async () => {
    const berth = await startBerth({
      project: "typed-schemas",
      env: { BERTH_SCHEMA_CACHE_DIR: join(newDataDir(), "schema-cache"), BERTH_SCHEMA_RESOLVE_TIMEOUT_MS: "1" },
    });
    try {
      const schemas = (await request(berth.url, "GET", "/assistants/annotated/schemas")).body as Schemas;
      assert.deepEqual(Object.keys((schemas.state_schema?.properties as object) ?? {}), Object.keys(ANNOTATED_PROPERTIES));
      assert.deepEqual(
        schemas.state_schema?.properties,
        Object.fromEntries(Object.keys(ANNOTATED_PROPERTIES).map((key) => [key, {}])),
      );
      assert.equal(schemas.config_schema, null);
      await assertLogged(berth, /"level":40[^\n]*timed out after 1 ms[^\n]*could not read the graph's schemas from its types/);
    } finally {
      await berth.stop();
    }
  });
});
