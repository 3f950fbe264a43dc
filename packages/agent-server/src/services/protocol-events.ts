import { matchesSubscription } from "@langchain/langgraph/stream";
import type { StoredEvent } from "../storage/types.js";

/** What a subscriber filters a protocol event on. */
interface ProtocolEventView {
  seq: number;
  method: string;
  params: { namespace: string[]; data?: unknown };
}

/** Which events a subscriber wants. */
export interface ProtocolEventFilter {
  channels: string[];
  namespaces?: string[][];
  depth?: number;
}

/** Parsed events, shared by the subscribers of one process (a broker hands them all the same object). */
const views = new WeakMap<StoredEvent, ProtocolEventView>();

/** The event's method (its SSE event name). */
export function protocolMethod(event: StoredEvent): string {
  return viewOf(event).method;
}

/** Whether a subscriber with `filter` gets the event: its channel, and a namespace under one of its prefixes. */
export function matchesFilter(event: StoredEvent, filter: ProtocolEventFilter): boolean {
  return matchesSubscription(viewOf(event), filter as Parameters<typeof matchesSubscription>[1]);
}

function viewOf(event: StoredEvent): ProtocolEventView {
  let view = views.get(event);
  if (!view) {
    view = JSON.parse(event.data) as ProtocolEventView;
    views.set(event, view);
  }
  return view;
}
