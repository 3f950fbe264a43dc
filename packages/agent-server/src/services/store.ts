import { BadGatewayError } from "@berth/service-kit";
import type { NamespaceQuery, StoreItemRecord, StoreSearchHit } from "../storage/store-types.js";
import type { JsonObject } from "../storage/types.js";
import { EmbeddingError } from "../store/embedding.js";
import type { ItemStore, PutItem, SearchItems } from "../store/item-store.js";

/** An item as the API shows it (the official servers' shape). */
export interface ApiItem {
  namespace: string[];
  key: string;
  value: JsonObject;
  created_at: string;
  updated_at: string;
}

export interface ApiSearchItem extends ApiItem {
  score: number | null;
}

/** The `/store` API: long-term memory shared by every thread (and every graph, through their BaseStore). */
export class StoreService {
  constructor(private readonly items: ItemStore) {}

  async get(namespace: string[], key: string, refreshTtl?: boolean): Promise<ApiItem | null> {
    const record = await this.items.get(namespace, key, refreshTtl);
    return record ? toApiItem(record) : null;
  }

  put(item: PutItem): Promise<void> {
    return embedding(() => this.items.put(item));
  }

  delete(namespace: string[], key: string): Promise<void> {
    return this.items.delete(namespace, key);
  }

  async search(query: SearchItems): Promise<{ items: ApiSearchItem[] }> {
    const hits = await embedding(() => this.items.search(query));
    return { items: hits.map(toApiSearchItem) };
  }

  async listNamespaces(query: NamespaceQuery): Promise<{ namespaces: string[][] }> {
    return { namespaces: await this.items.listNamespaces(query) };
  }
}

/** An embedder that fails is a service the request depended on: 502, with its reason. */
async function embedding<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof EmbeddingError) throw new BadGatewayError(`Embedding failed: ${error.message}`);
    throw error;
  }
}

function toApiItem(record: StoreItemRecord): ApiItem {
  return {
    namespace: record.namespace,
    key: record.key,
    value: record.value,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

function toApiSearchItem(hit: StoreSearchHit): ApiSearchItem {
  return { ...toApiItem(hit), score: hit.score };
}
