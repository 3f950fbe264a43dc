import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import type { StoreItemRecord, StoreSearchHit } from "../storage/memory-store-types.js";
import type { ItemStore } from "./item-store.js";

/**
 * LangGraph's BaseStore over the server's store: what a graph reads with
 * `config.store` / `getStore()` is what the `/store` API serves. Puts from
 * graphs get the configured default ttl and fields; reads refresh ttls as
 * `store.ttl.refresh_on_read` says.
 */
export class GraphStore extends BaseStore {
  constructor(private readonly items: ItemStore) {
    super();
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    // In order: a batch may put an item and read it back.
    for (const operation of operations) results.push(await this.apply(operation));
    return results as OperationResults<Op>;
  }

  private async apply(operation: Operation): Promise<unknown> {
    if ("namespacePrefix" in operation) return this.find(operation);
    if ("value" in operation) return this.write(operation);
    if ("key" in operation) return this.read(operation);
    return this.namespaces(operation);
  }

  private async write(operation: PutOperation): Promise<void> {
    if (operation.value === null) return this.items.delete(operation.namespace, operation.key);
    await this.items.put({
      namespace: operation.namespace,
      key: operation.key,
      value: operation.value,
      index: operation.index,
    });
  }

  private async read(operation: GetOperation): Promise<Item | null> {
    const record = await this.items.get(operation.namespace, operation.key);
    return record ? toItem(record) : null;
  }

  private async find(operation: SearchOperation): Promise<SearchItem[]> {
    const hits = await this.items.search({
      namespacePrefix: operation.namespacePrefix,
      filter: operation.filter,
      limit: operation.limit ?? 10,
      offset: operation.offset ?? 0,
      query: operation.query,
    });
    return hits.map(toSearchItem);
  }

  private namespaces(operation: ListNamespacesOperation): Promise<string[][]> {
    const conditions = operation.matchConditions ?? [];
    return this.items.listNamespaces({
      prefix: conditions.find((condition) => condition.matchType === "prefix")?.path,
      suffix: conditions.find((condition) => condition.matchType === "suffix")?.path,
      maxDepth: operation.maxDepth,
      limit: operation.limit,
      offset: operation.offset,
    });
  }
}

function toItem(record: StoreItemRecord): Item {
  return {
    namespace: record.namespace,
    key: record.key,
    value: record.value,
    createdAt: new Date(record.created_at),
    updatedAt: new Date(record.updated_at),
  };
}

function toSearchItem(hit: StoreSearchHit): SearchItem {
  return hit.score === null ? toItem(hit) : { ...toItem(hit), score: hit.score };
}
