import { ConfigError } from "../config/langgraph-config.js";
import type { EmbedSpec, StoreIndexSettings } from "../config/memory-store-config.js";
import type { OpenAiSettings } from "../config/settings.js";
import { type Embedder, EmbeddingError } from "./embedding.js";
import { openAiEmbedder } from "./openai-embeddings.js";
import { importProjectModule } from "../graphs/project-module.js";

type EmbedFunction = (texts: string[]) => number[][] | Promise<number[][]>;

/**
 * The embedder `store.index.embed` names: a module's export (a function from
 * texts to vectors, or an object with `embedDocuments`/`embedQuery`, such as
 * LangChain's Embeddings), or a provider's model (`openai:<model>`).
 * Every vector it returns is checked against `dims`.
 */
export async function loadEmbedder(index: StoreIndexSettings, openai: OpenAiSettings): Promise<Embedder> {
  const raw = await resolveEmbedder(index.embed, index.dims, openai);
  return checked(raw, index.dims);
}

async function resolveEmbedder(spec: EmbedSpec, dims: number, openai: OpenAiSettings): Promise<Embedder> {
  if (spec.kind === "provider") {
    if (spec.provider === "openai") return openAiEmbedder(spec.model, dims, openai);
    throw new ConfigError(
      `store.index.embed "${spec.spec}": provider "${spec.provider}" is not supported (use "openai:<model>", or a module of the project such as "./embeddings.ts:embed")`,
    );
  }
  let exported: unknown;
  try {
    const module = await importProjectModule(spec.file);
    exported = module[spec.exportName];
  } catch (error) {
    throw new ConfigError(`store.index.embed "${spec.spec}": loading ${spec.file} failed: ${(error as Error).message}`);
  }
  if (typeof exported === "function") {
    const embed = exported as EmbedFunction;
    return {
      embedDocuments: async (texts) => embed(texts),
      embedQuery: async (text) => (await embed([text]))[0] ?? [],
    };
  }
  const candidate = exported as Partial<Embedder> | undefined;
  if (typeof candidate?.embedDocuments === "function" && typeof candidate.embedQuery === "function") {
    return candidate as Embedder;
  }
  throw new ConfigError(
    `store.index.embed "${spec.spec}": export "${spec.exportName}" of ${spec.file} is neither a function (texts) => vectors nor an object with embedDocuments and embedQuery`,
  );
}

/** Wraps failures and wrong shapes in EmbeddingError, so a bad vector never reaches the database. */
function checked(embedder: Embedder, dims: number): Embedder {
  const verify = (vectors: unknown, expected: number): number[][] => {
    if (!Array.isArray(vectors) || vectors.length !== expected) {
      throw new EmbeddingError(
        `the embedder returned ${Array.isArray(vectors) ? vectors.length : "no"} vectors for ${expected} texts`,
      );
    }
    for (const vector of vectors) {
      if (!Array.isArray(vector) || vector.length !== dims || !vector.every(Number.isFinite)) {
        throw new EmbeddingError(`the embedder returned a vector that is not ${dims} finite numbers (store.index.dims)`);
      }
    }
    return vectors as number[][];
  };
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof EmbeddingError) throw error;
      throw new EmbeddingError((error as Error)?.message ?? String(error), { cause: error });
    }
  };
  return {
    embedDocuments: (texts) =>
      texts.length === 0 ? Promise.resolve([]) : guard(async () => verify(await embedder.embedDocuments(texts), texts.length)),
    embedQuery: (text) => guard(async () => verify([await embedder.embedQuery(text)], 1)[0]!),
  };
}
