import { BadGatewayError, HttpStatusError } from "@berth/service-kit";
import type { NamespaceQuery, StoreItemRecord, StoreSearchHit } from "../storage/store-types.js";
import type { JsonObject } from "../storage/types.js";
import { EmbeddingError } from "../store/embedding.js";
import type { ItemStore, PutItem, SearchItems } from "../store/item-store.js";
import type { Access, AuthEvent } from "./authorization.js";

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

/**
 * The `/store` API: long-term memory shared by every thread (and every graph,
 * through their BaseStore). A project's store handlers authorize by denying or
 * by rewriting the namespace (to the user's own, say): the operation uses the
 * namespace the handler left.
 */
export class StoreService {
  constructor(private readonly items: ItemStore) {}

  async get(namespace: string[], key: string, refreshTtl: boolean | undefined, access: Access): Promise<ApiItem | null> {
    const value = await authorizeStore(access, "store:get", { namespace: [...namespace], key });
    const record = await this.items.get(namespaceOf(value) ?? namespace, key, refreshTtl);
    return record ? toApiItem(record) : null;
  }

  async put(item: PutItem, access: Access): Promise<void> {
    const value = await authorizeStore(access, "store:put", {
      namespace: [...item.namespace],
      key: item.key,
      value: item.value,
      index: item.index,
    });
    await embedding(() => this.items.put({ ...item, namespace: namespaceOf(value) ?? item.namespace }));
  }

  async delete(namespace: string[], key: string, access: Access): Promise<void> {
    const value = await authorizeStore(access, "store:delete", { namespace: [...namespace], key });
    await this.items.delete(namespaceOf(value) ?? namespace, key);
  }

  async search(query: SearchItems, access: Access): Promise<{ items: ApiSearchItem[] }> {
    const value = await authorizeStore(access, "store:search", {
      namespace: [...query.namespacePrefix],
      filter: query.filter,
      limit: query.limit,
      offset: query.offset,
      query: query.query,
    });
    const hits = await embedding(() => this.items.search({ ...query, namespacePrefix: namespaceOf(value) ?? [] }));
    return { items: hits.map(toApiSearchItem) };
  }

  async listNamespaces(query: NamespaceQuery, access: Access): Promise<{ namespaces: string[][] }> {
    const value = await authorizeStore(access, "store:list_namespaces", {
      namespace: query.prefix && [...query.prefix],
      suffix: query.suffix,
      max_depth: query.maxDepth,
      limit: query.limit,
      offset: query.offset,
    });
    return { namespaces: await this.items.listNamespaces({ ...query, prefix: namespaceOf(value) }) };
  }
}

/** A store event's handler: it may deny or rewrite the namespace; a filter has no rows to apply to, so it is refused. */
async function authorizeStore<T extends { namespace?: string[] }>(access: Access, event: AuthEvent, value: T): Promise<T> {
  const authorized = await access.authorize(event, value);
  if (authorized.scope) {
    throw new HttpStatusError(500, `The "${event}" auth handler returned a filter: store handlers deny or rewrite the namespace`);
  }
  return authorized.value;
}

/** The namespace a handler left: undefined when it removed it; a malformed one is the handler's bug. */
function namespaceOf(value: { namespace?: unknown }): string[] | undefined {
  const namespace = value.namespace;
  if (namespace === undefined || namespace === null) return undefined;
  if (
    !Array.isArray(namespace) ||
    !namespace.every((label) => typeof label === "string" && label !== "" && !label.includes("."))
  ) {
    throw new HttpStatusError(500, "An auth handler left a namespace that is not a list of labels");
  }
  return namespace;
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
