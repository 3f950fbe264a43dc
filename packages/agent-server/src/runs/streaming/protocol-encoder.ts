import { toWire } from "../../wire/serialize.js";

/**
 * A protocol v2 event before the thread numbers it: what Berth sends, and
 * what `graph.streamEvents(..., { version: "v3" })` yields (numbered by the
 * graph run, a number Berth drops).
 */
export interface ProtocolRecord {
  method: string;
  params: { namespace: string[]; timestamp: number; node?: string; data: unknown };
}

type Dict = Record<string, unknown>;

/** A pending `interrupt()` as the state carries it under `__interrupt__`. */
interface PendingInterrupt {
  id: string;
  value?: unknown;
}

/**
 * Turns what a graph streams as protocol events (LangGraph's v3 event stream)
 * into the events protocol v2 clients get, as the reference server does: the
 * root's lifecycle is named after the graph and ends `interrupted` while
 * interrupts are pending, each pending interrupt is announced once as
 * `input.requested`, states lose `__interrupt__` (an empty one is not sent),
 * and LangChain messages are sent as plain objects. One encoder per run.
 */
export class ProtocolEncoder {
  private readonly announced = new Set<string>();
  /** The root's `running` went out before the graph's stream: the graph's first `running` is not sent again. */
  private announcedRunning = false;
  /** The last root `values`, as LangGraph gave it: the run's result for `/wait` and `/join`. */
  lastRootValues: unknown = undefined;

  constructor(private readonly graphId: string) {}

  /** The root's `running`, sent before the graph's stream starts: the graph's own is then dropped. */
  running(): ProtocolRecord {
    this.announcedRunning = true;
    return {
      method: "lifecycle",
      params: { namespace: [], timestamp: Date.now(), data: { event: "running", graph_name: this.graphId } },
    };
  }

  encode(event: ProtocolRecord): ProtocolRecord[] {
    const { namespace, timestamp } = event.params;
    const root = namespace.length === 0;
    switch (event.method) {
      case "lifecycle":
        if (root && this.announcedRunning && (event.params.data as Dict).event === "running") {
          this.announcedRunning = false;
          return [];
        }
        return [{ method: "lifecycle", params: { ...event.params, data: this.lifecycle(event.params.data as Dict, root) } }];
      case "values": {
        if (root) this.lastRootValues = event.params.data;
        const { values, interrupts } = splitInterrupts(event.params.data);
        const records = this.inputRequests(namespace, timestamp, interrupts);
        const wire = toWire(values);
        if (!isEmptyState(wire)) records.unshift({ method: "values", params: { ...event.params, data: wire } });
        return records;
      }
      case "updates": {
        const data = event.params.data as Dict;
        if (data?.node === "__interrupt__") {
          return this.inputRequests(namespace, timestamp, asInterrupts(data.values));
        }
        return [{ method: "updates", params: { ...event.params, data: toWire(data) } }];
      }
      case "messages":
        return [{ method: "messages", params: event.params }];
      default:
        return [{ method: event.method, params: { ...event.params, data: toWire(event.params.data) } }];
    }
  }

  private lifecycle(data: Dict, root: boolean): Dict {
    if (!root) return data;
    const ended = data.event === "completed" && this.announced.size > 0 ? "interrupted" : data.event;
    return { ...data, event: ended, graph_name: this.graphId };
  }

  private inputRequests(namespace: string[], timestamp: number, interrupts: PendingInterrupt[]): ProtocolRecord[] {
    const records: ProtocolRecord[] = [];
    for (const pending of interrupts) {
      if (this.announced.has(pending.id)) continue;
      this.announced.add(pending.id);
      records.push({
        method: "input.requested",
        params: { namespace, timestamp, data: { interrupt_id: pending.id, payload: toWire(pending.value) } },
      });
    }
    return records;
  }
}

function asInterrupts(value: unknown): PendingInterrupt[] {
  if (!Array.isArray(value)) return [];
  return value.filter((entry): entry is PendingInterrupt => typeof (entry as Dict | null)?.id === "string");
}

function splitInterrupts(state: unknown): { values: unknown; interrupts: PendingInterrupt[] } {
  if (state === null || typeof state !== "object" || Array.isArray(state) || !("__interrupt__" in state)) {
    return { values: state, interrupts: [] };
  }
  const { __interrupt__, ...values } = state as Dict;
  return { values, interrupts: asInterrupts(__interrupt__) };
}

function isEmptyState(state: unknown): boolean {
  return state === null || state === undefined || (typeof state === "object" && Object.keys(state).length === 0);
}
