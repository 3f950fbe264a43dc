import type { StoredEvent } from "../../storage/types.js";

/** How many protocol events `internEvent` remembers: about the recent events of a few hundred runs. */
const INTERNED = 20_000;
const interned = new Map<string, StoredEvent>();

/**
 * The one object of this process for a protocol v2 event: a copy read from
 * the log becomes the object its live delivery or an earlier read handed out,
 * so what is derived from an event (its parsed view, its encoded frame) is
 * worked out once for all the subscribers replaying it, not once each. Its
 * data names its seq, so equal data is the same event (or an identical one,
 * which serves as well).
 */
export function internEvent(event: StoredEvent): StoredEvent {
  const known = interned.get(event.data);
  if (known) return known;
  interned.set(event.data, event);
  if (interned.size > INTERNED) interned.delete(interned.keys().next().value as string);
  return event;
}
