import type {
  NamespaceQuery,
  StoreItemRecord,
  StoreRepository,
  StoreSearchHit,
  StoreVector,
} from "../storage/memory-store-types.js";
import type { JsonObject } from "../storage/types.js";
import type { Embedder } from "./embedding.js";
import { textsAtPath } from "./index-fields.js";

export interface ItemStoreOptions {
  /** Embeds items and queries; undefined: no semantic search (queries are ignored). */
  embedder?: Embedder;
  /** Paths embedded when a put names none. */
  fields: string[];
  /** Minutes an item lives when its put gives no ttl; null: forever. */
  defaultTtlMinutes: number | null;
  /** Reads push expiries unless they say otherwise. */
  refreshOnRead: boolean;
}

export interface PutItem {
  namespace: string[];
  key: string;
  value: JsonObject;
  /** Paths to embed; false: none; undefined/null: the configured fields. */
  index?: false | string[] | null;
  /** Minutes to live; null: forever; undefined: the configured default. */
  ttlMinutes?: number | null;
}

export interface SearchItems {
  namespacePrefix: string[];
  filter?: JsonObject;
  limit: number;
  offset: number;
  /** Ranks by meaning when the store has an embedder. */
  query?: string;
  /** undefined: the configured refresh_on_read. */
  refreshTtl?: boolean | null;
}

/**
 * The long-term memory store's rules over the storage backend: what is
 * embedded on put, the query vector of a search, ttl defaults and refreshes.
 * The HTTP API and graphs' BaseStore both go through it, so they see the same items.
 */
export class ItemStore {
  constructor(
    private readonly repository: StoreRepository,
    private readonly options: ItemStoreOptions,
  ) {}

  /** Semantic search is configured (`store.index`). */
  get indexed(): boolean {
    return this.options.embedder !== undefined;
  }

  get(namespace: string[], key: string, refreshTtl?: boolean | null): Promise<StoreItemRecord | undefined> {
    return this.repository.get(namespace, key, refreshTtl ?? this.options.refreshOnRead);
  }

  async put(item: PutItem): Promise<void> {
    const vectors = await this.vectorsOf(item.value, item.index);
    await this.repository.put({
      namespace: item.namespace,
      key: item.key,
      value: item.value,
      ttlMinutes: item.ttlMinutes === undefined ? this.options.defaultTtlMinutes : item.ttlMinutes,
      vectors,
    });
  }

  delete(namespace: string[], key: string): Promise<void> {
    return this.repository.delete(namespace, key);
  }

  async search(query: SearchItems): Promise<StoreSearchHit[]> {
    const embedder = this.options.embedder;
    const vector = query.query && embedder ? await embedder.embedQuery(query.query) : undefined;
    return this.repository.search({
      namespacePrefix: query.namespacePrefix,
      filter: query.filter,
      limit: query.limit,
      offset: query.offset,
      vector,
      refreshTtl: query.refreshTtl ?? this.options.refreshOnRead,
    });
  }

  listNamespaces(query: NamespaceQuery): Promise<string[][]> {
    return this.repository.listNamespaces(query);
  }

  private async vectorsOf(value: JsonObject, index: PutItem["index"]): Promise<StoreVector[]> {
    const embedder = this.options.embedder;
    if (!embedder || index === false) return [];
    const texts = (index ?? this.options.fields).flatMap((field) => textsAtPath(value, field).map((text) => ({ field, text })));
    if (texts.length === 0) return [];
    const vectors = await embedder.embedDocuments(texts.map((entry) => entry.text));
    return texts.map((entry, i) => ({ field: entry.field, vector: vectors[i]! }));
  }
}
