// Store vectors as both backends keep them (float32, little-endian, in a
// BLOB / bytea), and the ranking of a vector search. Both backends read the
// candidate vectors and rank them here: brute force, which for tens of
// thousands of vectors takes well under a second, with no database extension.
import { compareCodePoints } from "./memory-store-namespaces.js";

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function encodeVector(vector: number[]): Buffer {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i], i * 4);
  return bytes;
}

export function decodeVector(bytes: Uint8Array): Float32Array {
  const length = bytes.byteLength >> 2;
  // A view when the bytes allow one (Float32Array needs 4-byte alignment), else a copy.
  if (LITTLE_ENDIAN && bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, length);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vector = new Float32Array(length);
  for (let i = 0; i < length; i++) vector[i] = view.getFloat32(i * 4, true);
  return vector;
}

export interface RankedItem {
  namespace: string;
  key: string;
  score: number;
}

/** Higher score first; ties by namespace then key, so every page of a ranking is stable. */
function ranksBefore(a: RankedItem, b: RankedItem): boolean {
  if (a.score !== b.score) return a.score > b.score;
  const byNamespace = compareCodePoints(a.namespace, b.namespace);
  return byNamespace !== 0 ? byNamespace < 0 : compareCodePoints(a.key, b.key) < 0;
}

/**
 * Cosine similarity of stored vectors to a query vector, an item scoring as
 * its best vector. Vectors of another dimension are not comparable: callers
 * read only those of `byteLength` bytes.
 */
export class VectorRanking {
  private readonly query: Float32Array;
  private readonly queryNorm: number;
  private readonly best = new Map<string, Map<string, RankedItem>>();

  constructor(vector: number[]) {
    // Rounded as stored vectors are, so a vector scores 1 against itself.
    this.query = Float32Array.from(vector);
    let squares = 0;
    for (const x of this.query) squares += x * x;
    this.queryNorm = Math.sqrt(squares);
  }

  /** The stored size of the vectors this query compares with. */
  get byteLength(): number {
    return this.query.length * 4;
  }

  offer(namespace: string, key: string, bytes: Uint8Array): void {
    const score = this.cosine(decodeVector(bytes));
    let items = this.best.get(namespace);
    if (!items) this.best.set(namespace, (items = new Map()));
    const current = items.get(key);
    if (!current) items.set(key, { namespace, key, score });
    else if (score > current.score) current.score = score;
  }

  /** The items ranked offset..offset+limit, keeping only the best limit+offset while going through them. */
  page(limit: number, offset: number): RankedItem[] {
    const keep = limit + offset;
    if (limit <= 0) return [];
    // A heap whose root is the worst item kept: a better one replaces it.
    const heap: RankedItem[] = [];
    for (const items of this.best.values()) {
      for (const item of items.values()) {
        if (heap.length < keep) {
          heap.push(item);
          siftUp(heap, heap.length - 1);
        } else if (ranksBefore(item, heap[0])) {
          heap[0] = item;
          siftDown(heap, 0);
        }
      }
    }
    return heap.sort((a, b) => (ranksBefore(a, b) ? -1 : 1)).slice(offset, offset + limit);
  }

  private cosine(vector: Float32Array): number {
    let dot = 0;
    let squares = 0;
    for (let i = 0; i < vector.length; i++) {
      const x = vector[i];
      dot += x * this.query[i];
      squares += x * x;
    }
    const score = dot / (Math.sqrt(squares) * this.queryNorm);
    // A zero vector has no direction: it resembles nothing (and NaN would sort unpredictably).
    return Number.isFinite(score) ? score : 0;
  }
}

// The heap is ordered worst first: a parent ranks after its children.
function siftUp(heap: RankedItem[], index: number): void {
  while (index > 0) {
    const parent = (index - 1) >> 1;
    if (!ranksBefore(heap[parent], heap[index])) return;
    [heap[parent], heap[index]] = [heap[index], heap[parent]];
    index = parent;
  }
}

function siftDown(heap: RankedItem[], index: number): void {
  for (;;) {
    let worst = index;
    for (const child of [2 * index + 1, 2 * index + 2]) {
      if (child < heap.length && ranksBefore(heap[worst], heap[child])) worst = child;
    }
    if (worst === index) return;
    [heap[worst], heap[index]] = [heap[index], heap[worst]];
    index = worst;
  }
}
