import { BadGatewayError, BadRequestError, ForbiddenError, HttpStatusError, NotFoundError } from "@berth/service-kit";
import { jsonContains } from "../storage/sqlite/json-contains.js";
import type { NamespaceQuery, StoreItemRecord, StoreSearchHit } from "../storage/memory-store-types.js";
import type { JsonObject, MetadataScope } from "../storage/types.js";
import { EmbeddingError } from "../memory/embedding.js";
import type { ItemStore, PutItem, SearchItems } from "../memory/item-store.js";
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

/** How many items (or namespaces) a filtered search reads per page, and at most, to fill the page asked for. */
const FILTERED_SCAN_PAGE = 1000;
const FILTERED_SCAN_LIMIT = 10_000;

/**
 * The `/store` API: long-term memory shared by every thread (and every graph,
 * through their BaseStore). A project's store handlers authorize by denying,
 * by rewriting the namespace (to the user's own, say), or by returning a
 * filter, as on the reference server: the filter is matched against each item
 * as the document `{...value, namespace, key}` (so `{namespace: {$contains:
 * identity}}` keeps the items whose namespace holds the user's identity).
 */
export class StoreService {
  constructor(private readonly items: ItemStore) {}

  /** An item outside the handler's filter is absent for the user: null, as an item that does not exist. */
  async get(namespace: string[], key: string, refreshTtl: boolean | undefined, access: Access): Promise<ApiItem | null> {
    const { value, scope } = await authorizeStore(access, "store:get", { namespace: [...namespace], key });
    const address = namespaceOf(value) ?? namespace;
    if (!scope) {
      const record = await this.items.get(address, key, refreshTtl);
      return record ? toApiItem(record) : null;
    }
    // Looked at without touching its expiry first: another user's item is not refreshed by reading it.
    const found = await this.items.get(address, key, false);
    if (!found || !inScope(scope, found)) return null;
    const record = refreshTtl === false ? found : await this.items.get(address, key, refreshTtl);
    return record ? toApiItem(record) : null;
  }

  /** Under a filter, the item written must be in it (else 403), and may not replace an item outside it (404). */
  async put(item: PutItem, access: Access): Promise<void> {
    const { value, scope } = await authorizeStore(access, "store:put", {
      namespace: [...item.namespace],
      key: item.key,
      value: item.value,
      index: item.index,
    });
    const namespace = namespaceOf(value) ?? item.namespace;
    if (scope) {
      if (!inScope(scope, { namespace, key: item.key, value: item.value })) {
        throw new ForbiddenError("Forbidden: the item is outside what the store handler allows");
      }
      const existing = await this.items.get(namespace, item.key, false);
      if (existing && !inScope(scope, existing)) throw new NotFoundError("Item not found");
    }
    await embedding(() => this.items.put({ ...item, namespace }));
  }

  /** Under a filter, an item outside it, or an absent one whose address is, is not found (404) and stays. */
  async delete(namespace: string[], key: string, access: Access): Promise<void> {
    const { value, scope } = await authorizeStore(access, "store:delete", { namespace: [...namespace], key });
    const address = namespaceOf(value) ?? namespace;
    if (scope) {
      const existing = await this.items.get(address, key, false);
      if (!inScope(scope, existing ?? { namespace: address, key })) throw new NotFoundError("Item not found");
    }
    await this.items.delete(address, key);
  }

  async search(query: SearchItems, access: Access): Promise<{ items: ApiSearchItem[] }> {
    const { value, scope } = await authorizeStore(access, "store:search", {
      namespace: [...query.namespacePrefix],
      filter: query.filter,
      limit: query.limit,
      offset: query.offset,
      query: query.query,
    });
    const search = { ...query, namespacePrefix: namespaceOf(value) ?? [] };
    const hits = scope
      ? await filteredPage(
          query,
          (page) => this.items.search({ ...search, ...page }),
          (hit) => inScope(scope, hit),
        )
      : await embedding(() => this.items.search(search));
    return { items: hits.map(toApiSearchItem) };
  }

  async listNamespaces(query: NamespaceQuery, access: Access): Promise<{ namespaces: string[][] }> {
    const { value, scope } = await authorizeStore(access, "store:list_namespaces", {
      namespace: query.prefix && [...query.prefix],
      suffix: query.suffix,
      max_depth: query.maxDepth,
      limit: query.limit,
      offset: query.offset,
    });
    const list = { ...query, prefix: namespaceOf(value) };
    const namespaces = scope
      ? await filteredPage(
          query,
          (page) => this.items.listNamespaces({ ...list, ...page }),
          (namespace) => inScope(scope, { namespace }),
        )
      : await this.items.listNamespaces(list);
    return { namespaces };
  }
}

/** A store event's handler: it may deny, rewrite the namespace, or return a filter on the items. */
async function authorizeStore<T extends { namespace?: string[] }>(
  access: Access,
  event: AuthEvent,
  value: T,
): Promise<{ value: T; scope?: MetadataScope }> {
  const authorized = await access.authorize(event, value);
  return { value: authorized.value, scope: authorized.scope };
}

/** Whether an item (or an item's address) matches a store filter: the document is its value, namespace and key. */
function inScope(scope: MetadataScope, item: { namespace: string[]; key?: string; value?: JsonObject }): boolean {
  const document: JsonObject = { ...item.value, namespace: item.namespace };
  if (item.key !== undefined) document.key = item.key;
  return jsonContains(document, scope);
}

/**
 * The page `offset`/`limit` of what a filter keeps: the backend has no filter
 * to apply, so its results are read page by page and kept when they match, up
 * to a bound (a 400 past it rather than a scan of the whole store).
 */
async function filteredPage<T>(
  wanted: { limit: number; offset: number },
  read: (page: { limit: number; offset: number }) => Promise<T[]>,
  keep: (item: T) => boolean,
): Promise<T[]> {
  const needed = wanted.offset + wanted.limit;
  const kept: T[] = [];
  let scanned = 0;
  while (kept.length < needed) {
    if (scanned >= FILTERED_SCAN_LIMIT) {
      throw new BadRequestError(
        `The store handler's filter kept too few of the first ${FILTERED_SCAN_LIMIT} entries: narrow the namespace or the filter`,
      );
    }
    const page = await embedding(() => read({ limit: FILTERED_SCAN_PAGE, offset: scanned }));
    scanned += page.length;
    kept.push(...page.filter(keep));
    if (page.length < FILTERED_SCAN_PAGE) break;
  }
  return kept.slice(wanted.offset, needed);
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
