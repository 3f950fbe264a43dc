import { v5 as uuidv5, validate as isUuid } from "uuid";

/** Namespace of system assistant ids, as the official server uses it. */
const SYSTEM_ASSISTANT_NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

/** Graph ids are few and asked for on every run (an assistant id may be a graph id): hashed once each. */
const systemIds = new Map<string, string>();
const SYSTEM_IDS_KEPT = 1_000;

export function systemAssistantId(graphId: string): string {
  let id = systemIds.get(graphId);
  if (id === undefined) {
    id = uuidv5(graphId, SYSTEM_ASSISTANT_NAMESPACE);
    // Any string may be asked for (a client's unknown assistant id): the memo stays bounded.
    if (systemIds.size < SYSTEM_IDS_KEPT) systemIds.set(graphId, id);
  }
  return id;
}

export { isUuid };
