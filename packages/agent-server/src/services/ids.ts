import { v7 } from "uuid";

/**
 * A new thread or run id: a UUIDv7, whose leading bits are its creation
 * time. Every index of the runs, threads, checkpoints and event logs starts
 * with one of these ids, so with time-ordered ids the entries of runs
 * created together land on the same few pages at the end of each B-tree,
 * where random (v4) ids put each on a page of its own, written again by
 * every commit (a thread + wait run made ~71 write calls to SQLite's files
 * with v4 ids, ~26 with v7). Ids a client chooses are kept as given.
 */
export function newId(): string {
  return v7();
}
