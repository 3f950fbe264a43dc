import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { newDataDir } from "@berth/test-support";
import { ConfigError } from "../../src/config/langgraph-config.js";
import { storeSettings } from "../../src/config/memory-store-config.js";
import { EmbeddingError } from "../../src/memory/embedding.js";
import { textsAtPath } from "../../src/memory/index-fields.js";
import { loadEmbedder } from "../../src/memory/load-embedder.js";

describe("store: the texts of an item's fields", () => {
  const value = {
    text: "hello",
    meta: { title: "T", n: 3 },
    parts: [{ body: "a" }, { body: "b" }],
    tags: ["x", "y"],
    none: null,
  };

  it("reads $, dotted paths and array steps", () => {
    assert.deepEqual(textsAtPath(value, "$"), [JSON.stringify(value)]);
    assert.deepEqual(textsAtPath(value, "text"), ["hello"]);
    assert.deepEqual(textsAtPath(value, "meta.title"), ["T"]);
    assert.deepEqual(textsAtPath(value, "meta.n"), ["3"], "other values as JSON");
    assert.deepEqual(textsAtPath(value, "parts[*].body"), ["a", "b"]);
    assert.deepEqual(textsAtPath(value, "parts[-1].body"), ["b"]);
    assert.deepEqual(textsAtPath(value, "tags[0]"), ["x"]);
  });

  it("gives nothing for absent fields and nulls", () => {
    for (const path of ["missing", "meta.missing", "text.deeper", "parts[5].body", "none", "tags[*].x"]) {
      assert.deepEqual(textsAtPath(value, path), [], path);
    }
  });
});

describe("store: loading the embedder langgraph.json names", () => {
  const project = newDataDir("berth-embedder-");
  writeFileSync(
    join(project, "embed.mjs"),
    [
      "export const fn = async (texts) => texts.map((t) => [t.length, 1]);",
      "export const object = { embedDocuments: async (texts) => texts.map(() => [0, 1]), embedQuery: async () => [1, 0] };",
      "export const wrongDims = async (texts) => texts.map(() => [1, 2, 3]);",
      "export const throws = async () => { throw new Error('down'); };",
      "export const notOne = 42;",
    ].join("\n"),
  );
  const load = (embed: string) =>
    loadEmbedder(storeSettings({ index: { dims: 2, embed } }, project).index!, { baseUrl: "https://api.openai.com/v1" });

  it("takes a function of texts, or an object with embedDocuments and embedQuery", async () => {
    const fn = await load("./embed.mjs:fn");
    assert.deepEqual(await fn.embedDocuments(["ab", "abc"]), [
      [2, 1],
      [3, 1],
    ]);
    assert.deepEqual(await fn.embedQuery("abcd"), [4, 1]);
    const object = await load("./embed.mjs:object");
    assert.deepEqual(await object.embedQuery("q"), [1, 0]);
  });

  it("checks the vectors' dimensions and wraps failures", async () => {
    await assert.rejects((await load("./embed.mjs:wrongDims")).embedDocuments(["a"]), EmbeddingError);
    await assert.rejects((await load("./embed.mjs:throws")).embedQuery("a"), { name: "EmbeddingError", message: "down" });
  });

  it("refuses what is no embedder, and providers other than openai", async () => {
    await assert.rejects(load("./embed.mjs:notOne"), ConfigError);
    await assert.rejects(load("./missing.mjs:fn"), ConfigError);
    await assert.rejects(load("cohere:embed-english-v3.0"), /provider "cohere" is not supported/);
    assert.ok(await load("openai:text-embedding-3-small"), "a provider model is not called at load");
  });

  it("reads the store section's defaults", () => {
    assert.deepEqual(storeSettings(undefined, project), {
      index: undefined,
      defaultTtlMinutes: null,
      refreshOnRead: true,
      sweepIntervalMinutes: 60,
    });
    const settings = storeSettings({ index: { dims: 8, embed: "openai:text-embedding-3-small" } }, project);
    assert.deepEqual(settings.index?.fields, ["$"]);
    assert.deepEqual(settings.index?.embed, {
      kind: "provider",
      provider: "openai",
      model: "text-embedding-3-small",
      spec: "openai:text-embedding-3-small",
    });
  });
});
