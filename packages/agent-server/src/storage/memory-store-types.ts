/**
 * The long-term memory store (LangGraph's BaseStore, and the API's /store
 * routes) as the storage backends keep it: sqlite/memory-store.ts and
 * postgres/memory-store.ts, behind the same contract.
 *
 * A namespace is a list of labels (non-empty, no "."); backends keep it joined
 * with "." so a prefix is a string prefix at a label boundary.
 */

import type { JsonObject } from "./json.js";

export interface StoreItemRecord {
  namespace: string[];
  key: string;
  value: JsonObject;
  created_at: string;
  updated_at: string;
  /** When it stops existing; null: never. An expired item is absent from every read before the sweeper deletes it. */
  expires_at: string | null;
  /** Its time to live in minutes (reads that refresh it push expires_at this far from now); null: none. */
  ttl_minutes: number | null;
}

/** One embedded text of an item: the field (path) it came from and its vector. */
export interface StoreVector {
  field: string;
  vector: number[];
}

export interface StorePut {
  namespace: string[];
  key: string;
  value: JsonObject;
  ttlMinutes: number | null;
  /** The item's vectors, replacing any it had; empty: it has none (not searchable by query). */
  vectors: StoreVector[];
}

export interface StoreSearchQuery {
  /** Items whose namespace starts with these labels ([]: every item). */
  namespacePrefix: string[];
  /**
   * Conditions on the value's top-level fields: a plain value means equality (objects and arrays
   * compare as JSON), or an object of operators $eq, $ne, $gt, $gte, $lt, $lte.
   */
  filter?: JsonObject;
  limit: number;
  offset: number;
  /** Rank by cosine similarity to this vector (an item's best vector counts); items without vectors are left out. */
  vector?: number[];
  /** Push the found items' expires_at to now + their ttl_minutes. */
  refreshTtl: boolean;
}

export interface StoreSearchHit extends StoreItemRecord {
  /** Cosine similarity when searched by vector, else null. Without a vector, hits come newest updated first. */
  score: number | null;
}

export interface NamespaceQuery {
  prefix?: string[];
  suffix?: string[];
  /** Namespaces longer than this are cut to it (and de-duplicated). */
  maxDepth?: number;
  limit: number;
  offset: number;
}

export interface StoreSize {
  items: number;
  /** Bytes of values and vectors, as the backend measures them. */
  bytes: number;
}

export interface StoreRepository {
  /** The live item; with refreshTtl its expiry is pushed to now + its ttl_minutes. */
  get(namespace: string[], key: string, refreshTtl: boolean): Promise<StoreItemRecord | undefined>;
  /** Inserts or replaces (created_at is kept on replace). */
  put(item: StorePut): Promise<void>;
  /** Deleting an absent item is no error. */
  delete(namespace: string[], key: string): Promise<void>;
  search(query: StoreSearchQuery): Promise<StoreSearchHit[]>;
  /** Distinct namespaces of live items, sorted. */
  listNamespaces(query: NamespaceQuery): Promise<string[][]>;
  /** Deletes at most `limit` expired items (with their vectors); how many it deleted. */
  sweepExpired(limit: number): Promise<number>;
  size(): Promise<StoreSize>;
}
