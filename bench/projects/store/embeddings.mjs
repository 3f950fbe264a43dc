/**
 * The test fixture's deterministic bag-of-words embedder (packages/agent-server/test/fixtures/store-app): each word adds 1
 * to one of 64 buckets (FNV-1a hash), then the vector is normalized. No model, so the benchmark measures the server.
 */
const DIMS = 64;

function bucket(word) {
  let hash = 0x811c9dc5;
  for (const char of word) {
    hash ^= char.codePointAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % DIMS;
}

function embedOne(text) {
  const vector = new Array(DIMS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) vector[bucket(word)] += 1;
  const norm = Math.hypot(...vector) || 1;
  return vector.map((value) => value / norm);
}

export async function embed(texts) {
  return texts.map(embedOne);
}
