import { type BaseMessageChunk, isBaseMessageChunk } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { StreamEvent } from "@langchain/core/tracers/log_stream";
import { isCheckpointEnvelope } from "@langchain/langgraph";
import { toWire } from "../../wire/serialize.js";
import { checkpointRef } from "../../wire/thread-state.js";
import type { StreamMode } from "./stream-modes.js";

/** One SSE event: `event:` name and the JSON-safe `data:` payload. */
export interface EncodedEvent {
  event: string;
  data: unknown;
}

type Dict = Record<string, unknown>;

/**
 * Turns what a LangGraph graph streams into the Agent Server's SSE events.
 * One encoder per run: the SDK `messages` mode is stateful (chunks accumulate
 * per message id, and each message is completed once per namespace).
 *
 * Wire types: `messages` (messages-tuple) forwards the chunk as `toWire` gives
 * it, `type: "AIMessageChunk"`, as the Python server does; the SDK strips the
 * `MessageChunk` suffix itself. `messages/partial` and `messages/complete` send
 * the accumulated message as a message (`type: "ai"`, a chunk with its
 * `tool_call_chunks`), as the JS reference server does (its `toDict()` says
 * `ai`): clients in the wild filter those events on `type === "ai"`.
 */
export class StreamEncoder {
  private readonly requested: Set<string>;
  /** Accumulated chunks of the messages being streamed, by message id. */
  private readonly partials = new Map<string, BaseMessageChunk>();
  /** Ids whose `messages/metadata` was sent. */
  private readonly announced = new Set<string>();
  /** Ids already sent in `messages/complete`, per namespace. */
  private readonly completed = new Map<string, Set<string>>();
  private rootRunId: string | undefined;
  /**
   * The last root `values` chunk, as LangGraph gave it: the run's result for
   * `/wait` and `/join`. Kept here because under `streamEvents` only the
   * encoder sees the graph's chunks.
   */
  lastRootValues: unknown = undefined;

  constructor(
    requested: StreamMode[],
    private readonly subgraphs: boolean,
  ) {
    // The API streams `values` when the client names no mode.
    this.requested = new Set(requested.length > 0 ? requested : ["values"]);
  }

  /** Encodes one `[namespace, mode, chunk]` item of `graph.stream(..., { streamMode: [...] })`. */
  encode(namespace: string[], mode: string, chunk: unknown): EncodedEvent[] {
    const name = (base: string) => (this.subgraphs && namespace.length > 0 ? `${base}|${namespace.join("|")}` : base);
    const events: EncodedEvent[] = [];
    switch (mode) {
      case "messages":
        if (this.requested.has("messages-tuple")) events.push({ event: name("messages"), data: toWire(chunk) });
        if (this.requested.has("messages")) events.push(...this.messageEvents(chunk, name));
        break;
      case "values":
        if (namespace.length === 0) this.lastRootValues = chunk;
        if (this.requested.has("values")) events.push({ event: name("values"), data: toWire(chunk) });
        if (this.requested.has("messages")) events.push(...this.completeFromValues(namespace, chunk, name));
        break;
      case "checkpoints":
        // Under streamEvents with subgraphs, LangGraph slips lightweight
        // `{id, parent_id, step, source}` envelopes into this mode when it was
        // NOT requested (when it was, it sends full checkpoints only). They
        // are not API events.
        if (this.requested.has("checkpoints") && !isCheckpointEnvelope(chunk)) {
          events.push({ event: name("checkpoints"), data: toWire(shapeCheckpoint(chunk as Dict)) });
        }
        break;
      case "debug":
        if (this.requested.has("debug")) events.push({ event: name("debug"), data: toWire(shapeDebug(chunk as Dict)) });
        break;
      case "tasks":
        if (this.requested.has("tasks")) events.push({ event: name("tasks"), data: toWire(shapeTask(chunk as Dict)) });
        break;
      default:
        // updates (including `__interrupt__` keys, which the SDK reads) and custom.
        if (this.requested.has(mode)) events.push({ event: name(mode), data: toWire(chunk) });
    }
    return events;
  }

  /**
   * Encodes one event of `graph.streamEvents(input, { version: "v2", streamMode, subgraphs })`.
   *
   * Observed with @langchain/langgraph 1.7: the graph's stream chunks arrive as
   * `on_chain_stream` events of the root run (the graph itself, named after it,
   * `LangGraph` by default), with `data.chunk = [mode, payload]`, or
   * `[namespace, mode, payload]` when `subgraphs` is set (subgraph chunks come
   * through the root run too, with a `node:task_id` namespace; the subgraphs emit
   * no `on_chain_stream` of their own). v2 events carry no `parent_ids` in JS, so
   * the root is recognised as the run of the first event, which is always its
   * `on_chain_start`. As in the JS reference server, those root chunks become
   * mode events and are not repeated as `events`; all else is an `events` event.
   */
  encodeStreamEvent(event: StreamEvent): EncodedEvent[] {
    this.rootRunId ??= event.run_id;
    if (event.tags?.includes("langsmith:hidden")) return [];
    if (event.event === "on_chain_stream" && event.run_id === this.rootRunId) {
      const item = splitGraphChunk(event.data.chunk);
      if (item) return this.encode(...item);
    }
    return this.requested.has("events") ? [{ event: "events", data: toWire(event) }] : [];
  }

  /**
   * SDK `messages` mode from one LangGraph `[message, metadata]` item: a
   * model's token chunks give `messages/metadata` (first chunk) and
   * accumulating `messages/partial`s. Whole messages (a node's output) give
   * nothing here: like the reference server, they complete when a values
   * chunk holds them, so a message that never reaches the state (its node
   * interrupted) is not announced at all.
   */
  private messageEvents(chunk: unknown, name: (base: string) => string): EncodedEvent[] {
    const [message, metadata] = Array.isArray(chunk) ? chunk : [];
    if (!isBaseMessageChunk(message) || typeof message.id !== "string") return [];
    const id = message.id;
    const events: EncodedEvent[] = [];
    if (!this.announced.has(id)) {
      this.announced.add(id);
      events.push({ event: name("messages/metadata"), data: { [id]: { metadata: toWire(metadata ?? {}) } } });
    }
    const previous = this.partials.get(id);
    const accumulated = previous ? previous.concat(message) : message;
    this.partials.set(id, accumulated);
    events.push({ event: name("messages/partial"), data: [messageDict(accumulated)] });
    return events;
  }

  /** `messages/complete` for each message of a values chunk not completed yet in its namespace. */
  private completeFromValues(namespace: string[], values: unknown, name: (base: string) => string): EncodedEvent[] {
    const messages = isDict(values) ? values.messages : undefined;
    if (!Array.isArray(messages)) return [];
    const done = this.completedIn(namespace);
    const events: EncodedEvent[] = [];
    for (const message of messages) {
      const id = isDict(message) ? message.id : undefined;
      if (typeof id !== "string" || done.has(id)) continue;
      done.add(id);
      this.partials.delete(id);
      events.push({ event: name("messages/complete"), data: [messageDict(message)] });
    }
    return events;
  }

  private completedIn(namespace: string[]): Set<string> {
    const key = namespace.join("|");
    let set = this.completed.get(key);
    if (!set) this.completed.set(key, (set = new Set()));
    return set;
  }
}

function isDict(value: unknown): value is Dict {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The wire dict of a (possibly accumulated) message as `toDict()` gives it:
 * typed as a message (`ai`), a chunk keeping its `tool_call_chunks`.
 */
function messageDict(message: unknown): Dict {
  const wire = toWire(message) as Dict;
  if (typeof wire.type === "string" && wire.type.endsWith("MessageChunk")) {
    wire.type = wire.type.slice(0, -"MessageChunk".length).toLowerCase();
  }
  return wire;
}

function splitGraphChunk(chunk: unknown): [string[], string, unknown] | undefined {
  if (!Array.isArray(chunk)) return undefined;
  if (typeof chunk[0] === "string" && chunk.length === 2) return [[], chunk[0], chunk[1]];
  if ((Array.isArray(chunk[0]) || chunk[0] == null) && typeof chunk[1] === "string") {
    return [(chunk[0] as string[] | null) ?? [], chunk[1], chunk[2]];
  }
  return undefined;
}

/**
 * LangGraph's checkpoint payload in the API's shape: `parentConfig` becomes
 * `parent_config`, `checkpoint`/`parent_checkpoint` refs are added (as the JS
 * server does), and configs lose the runtime internals LangGraph leaves in them
 * (subgraph configs carry `__pregel_*` keys holding streams, signals, the
 * checkpointer...), which are neither JSON nor the client's business.
 */
function shapeCheckpoint(payload: Dict): Dict {
  const { parentConfig, ...rest } = payload;
  return {
    ...rest,
    config: publicConfig(rest.config),
    parent_config: publicConfig(parentConfig),
    checkpoint: checkpointRef(rest.config as RunnableConfig | undefined),
    parent_checkpoint: checkpointRef(parentConfig as RunnableConfig | undefined),
    tasks: Array.isArray(rest.tasks) ? rest.tasks.map((task) => shapeTask(task as Dict)) : [],
  };
}

function shapeDebug(chunk: Dict): Dict {
  if (!isDict(chunk.payload)) return chunk;
  const payload = chunk.type === "checkpoint" ? shapeCheckpoint(chunk.payload) : shapeTask(chunk.payload);
  return { ...chunk, payload };
}

/**
 * A task as the API shows it: a subgraph's config (one that names its thread)
 * becomes a checkpoint ref, whose `checkpoint_id` is null until the subgraph
 * saved a checkpoint; an error becomes a string.
 */
function shapeTask(task: Dict): Dict {
  if (!isDict(task)) return task;
  const shaped: Dict = { ...task };
  const state = task.state;
  if (isDict(state) && isDict(state.configurable) && typeof state.configurable.thread_id === "string") {
    const configurable = state.configurable;
    shaped.checkpoint = {
      thread_id: configurable.thread_id,
      checkpoint_ns: configurable.checkpoint_ns ?? "",
      checkpoint_id: configurable.checkpoint_id ?? null,
      checkpoint_map: configurable.checkpoint_map ?? null,
    };
    delete shaped.state;
  }
  if (task.error instanceof Error) shaped.error = `${task.error.name}: ${task.error.message}`;
  return shaped;
}

function publicConfig(config: unknown): unknown {
  if (!isDict(config)) return config ?? null;
  const { callbacks: _callbacks, signal: _signal, ...rest } = config;
  if (isDict(rest.configurable)) {
    rest.configurable = Object.fromEntries(Object.entries(rest.configurable).filter(([key]) => !key.startsWith("__")));
  }
  return rest;
}
