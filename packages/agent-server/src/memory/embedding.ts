/** Turns texts into vectors of the configured dimensions (LangChain's Embeddings contract). */
export interface Embedder {
  embedDocuments(texts: string[]): Promise<number[][]>;
  embedQuery(text: string): Promise<number[]>;
}

/** Embedding failed (the provider or the project's embedder): the request that needed it fails, nothing is written. */
export class EmbeddingError extends Error {
  override name = "EmbeddingError";
}
