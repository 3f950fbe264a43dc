import type { OpenAiSettings } from "../config/settings.js";
import type { Embedder } from "./embedding.js";

/** OpenAI takes up to 2048 inputs per request; smaller batches keep each request's body and latency moderate. */
const BATCH = 256;
const TIMEOUT_MS = 30_000;

interface EmbeddingsResponse {
  data: { index: number; embedding: number[] }[];
}

/**
 * OpenAI's embeddings endpoint over fetch (no SDK dependency): `OPENAI_API_KEY`,
 * and `OPENAI_BASE_URL` for a compatible server. The text-embedding-3 models
 * are asked for `dims` dimensions; older models must have that many natively.
 */
export function openAiEmbedder(model: string, dims: number, openai: OpenAiSettings): Embedder {
  const embed = async (texts: string[]): Promise<number[][]> => {
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += BATCH) {
      vectors.push(...(await request(openai, model, dims, texts.slice(start, start + BATCH))));
    }
    return vectors;
  };
  return {
    embedDocuments: embed,
    embedQuery: async (text) => (await embed([text]))[0]!,
  };
}

async function request({ apiKey, baseUrl }: OpenAiSettings, model: string, dims: number, input: string[]): Promise<number[][]> {
  if (!apiKey) throw new Error("OPENAI_API_KEY is not set (store.index.embed uses OpenAI)");
  const response = await fetch(`${baseUrl}/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ model, input, ...(model.startsWith("text-embedding-3") ? { dimensions: dims } : {}) }),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (!response.ok) {
    const detail = (await response.text().catch(() => "")).slice(0, 500);
    throw new Error(`OpenAI embeddings answered ${response.status}: ${detail}`);
  }
  const body = (await response.json()) as EmbeddingsResponse;
  return [...body.data].sort((a, b) => a.index - b.index).map((item) => item.embedding);
}
