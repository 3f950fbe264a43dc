import { v5 as uuidv5, validate as isUuid } from "uuid";

/** Namespace of system assistant ids, as the official server uses it. */
const SYSTEM_ASSISTANT_NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

export function systemAssistantId(graphId: string): string {
  return uuidv5(graphId, SYSTEM_ASSISTANT_NAMESPACE);
}

export { isUuid };
