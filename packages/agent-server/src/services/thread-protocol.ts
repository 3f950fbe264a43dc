import { randomUUID } from "node:crypto";
import { ConflictError, HttpStatusError, NotFoundError } from "@berth/service-kit";
import { z } from "zod";
import type { RunBroker } from "../runs/brokers/broker.js";
import { PROTOCOL_EVENT } from "../runs/streaming/event-writer.js";
import { followProtocolThread, type ProtocolFollower } from "../runs/streaming/follow-protocol.js";
import { followRun } from "../runs/streaming/follow-run.js";
import {
  type JsonObject,
  type MultitaskStrategy,
  type RunStatus,
  type Storage,
  type StoredEvent,
  TERMINAL_RUN_STATUSES,
} from "../storage/types.js";
import type { Access } from "./authorization.js";
import type { GraphStateService } from "./graph-state.js";
import type { RunCreateInput, RunService } from "./runs.js";

/** The error codes of protocol v2. */
export type ProtocolErrorCode =
  | "invalid_argument"
  | "unknown_command"
  | "unknown_error"
  | "no_such_run"
  | "no_such_subscription"
  | "no_such_namespace"
  | "no_such_interrupt"
  | "no_such_checkpoint"
  | "permission_denied"
  | "not_supported";

/** A command's failure, answered as a protocol error (HTTP 200) rather than an HTTP error. */
export class ProtocolCommandError extends Error {
  constructor(
    readonly code: ProtocolErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A command of protocol v2, as a transport received it. */
export interface ProtocolCommand {
  id: number;
  method: string;
  params?: Record<string, unknown>;
}

/** What a transport answers a command with. */
export type ProtocolReply =
  | { type: "success"; id: number; result: unknown; meta: { thread_id: string; applied_through_seq: number } }
  | { type: "error"; id: number | null; error: ProtocolErrorCode; message: string };

/** What a transport adds to each run a command creates: the request's user and headers in its config. */
export type RunDecorator = (input: RunCreateInput) => RunCreateInput;

/** The stream modes of a protocol run, as the reference runs them (the v3 event stream adds lifecycle and checkpoints). */
const PROTOCOL_STREAM_MODES = ["values", "updates", "messages", "tools", "custom", "tasks"];

const RunStartParams = z.object({
  assistant_id: z.string().min(1),
  input: z.unknown().optional(),
  config: z.record(z.string(), z.unknown()).nullish(),
  context: z.record(z.string(), z.unknown()).nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  multitaskStrategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]).optional(),
  multitask_strategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]).optional(),
});

const InputRespondParams = z
  .object({
    interrupt_id: z.string().min(1).optional(),
    response: z.unknown().optional(),
    responses: z
      .array(z.object({ interrupt_id: z.string().min(1), response: z.unknown() }))
      .min(1)
      .optional(),
    update: z.unknown().optional(),
    goto: z.unknown().optional(),
    config: z.record(z.string(), z.unknown()).nullish(),
    metadata: z.record(z.string(), z.unknown()).nullish(),
  })
  .refine((params) => params.interrupt_id !== undefined || params.responses !== undefined, {
    message: "interrupt_id (or responses) is required",
  });

const StateGetParams = z.object({ keys: z.array(z.string()).optional() });

/** Commands the SDK may send that Berth does not serve. */
const UNSERVED_COMMANDS = new Set(["state.listCheckpoints", "state.fork", "input.inject"]);

/** A node of the agent tree (`agent.getTree`). */
interface AgentTreeNode {
  namespace: string[];
  status: string;
  graph_name: string;
  children?: AgentTreeNode[];
}

/**
 * Protocol v2 over a thread: the commands (`run.start`, `input.respond`,
 * `state.get`, `agent.getTree`, ...) and the thread's event log, numbered per
 * thread across runs. Every command and every stream is authorized for the
 * request that carries it.
 */
export class ThreadProtocolService {
  constructor(
    private readonly storage: Storage,
    private readonly runs: RunService,
    private readonly graphState: GraphStateService,
    private readonly broker: RunBroker,
  ) {}

  /** Answers a command; subscriptions are a transport's business (`subscription.*` arrive here only over HTTP). */
  async command(threadId: string, command: ProtocolCommand, access: Access, decorate: RunDecorator): Promise<ProtocolReply> {
    try {
      const result = await this.execute(threadId, command, access, decorate);
      return {
        type: "success",
        id: command.id,
        result,
        meta: { thread_id: threadId, applied_through_seq: await this.storage.runs.threadEventSeq(threadId) },
      };
    } catch (error) {
      return protocolError(command.id, error);
    }
  }

  /**
   * The thread's events after `since` until `signal` aborts. The thread need
   * not exist yet (a run started later creates it), but another user's
   * thread is not found.
   */
  async events(threadId: string, since: number, access: Access, signal: AbortSignal): Promise<ProtocolFollower> {
    await this.checkReadable(threadId, access);
    return followProtocolThread(threadId, since, { runs: this.storage.runs, broker: this.broker }, signal);
  }

  private async execute(threadId: string, command: ProtocolCommand, access: Access, decorate: RunDecorator): Promise<unknown> {
    const params = command.params ?? {};
    switch (command.method) {
      case "run.start":
        return this.startRun(threadId, parse(RunStartParams, params), access, decorate);
      case "input.respond":
        return this.respond(threadId, parse(InputRespondParams, params), access, decorate);
      case "state.get":
        return this.state(threadId, parse(StateGetParams, params), access);
      case "agent.getTree":
        return this.tree(threadId, access);
      case "subscription.subscribe":
        return { subscription_id: randomUUID(), replayed_events: 0 };
      case "subscription.unsubscribe":
        return {};
      case "subscription.reconnect":
        throw new ProtocolCommandError("not_supported", "subscription.reconnect is not supported: reconnect with `since`");
      default:
        throw new ProtocolCommandError(
          "unknown_command",
          UNSERVED_COMMANDS.has(command.method) ? `${command.method} is not served` : `Unknown command: ${command.method}`,
        );
    }
  }

  private async startRun(
    threadId: string,
    params: z.infer<typeof RunStartParams>,
    access: Access,
    decorate: RunDecorator,
  ): Promise<unknown> {
    const thread = await this.storage.threads.get(threadId);
    // A pending interrupt() takes the input as its answer; otherwise (after a cancel too) it is plain input.
    const resumes = thread?.status === "interrupted" && Object.keys(thread.interrupts).length > 0;
    const configurable = (params.config?.configurable ?? {}) as JsonObject;
    const checkpointId = typeof configurable.checkpoint_id === "string" ? configurable.checkpoint_id : undefined;
    const run = await this.runs.create(
      threadId,
      decorate(
        protocolRun({
          assistant_id: params.assistant_id,
          ...(resumes ? { command: { resume: params.input ?? null } } : { input: params.input ?? null }),
          config: (params.config ?? null) as JsonObject | null,
          context: (params.context ?? null) as JsonObject | null,
          metadata: (params.metadata ?? null) as JsonObject | null,
          checkpoint_id: checkpointId ?? null,
          multitask_strategy: params.multitask_strategy ?? params.multitaskStrategy ?? "enqueue",
        }),
      ),
      access,
    );
    return { run_id: run.run_id };
  }

  private async respond(
    threadId: string,
    params: z.infer<typeof InputRespondParams>,
    access: Access,
    decorate: RunDecorator,
  ): Promise<unknown> {
    const [latest] = await this.runs.list(threadId, { limit: 1, offset: 0 }, access).catch(notFoundAs("no_such_run"));
    if (!latest) throw new ProtocolCommandError("no_such_run", "No run was started on this thread");
    const answers = params.responses ?? [{ interrupt_id: params.interrupt_id!, response: params.response }];
    // While a run is in flight (the one that is being interrupted, ending) the answer waits behind it, unchecked.
    if ((await this.storage.runs.inflight(threadId)).length === 0) {
      const thread = await this.storage.threads.get(threadId);
      if (thread?.status !== "interrupted") throw new ProtocolCommandError("invalid_argument", "The thread is not interrupted");
      const pending = new Set(
        Object.values(thread.interrupts)
          .flat()
          .map((entry) => entry.id),
      );
      const unknown = answers.find((answer) => !pending.has(answer.interrupt_id));
      if (unknown) throw new ProtocolCommandError("no_such_interrupt", `No pending interrupt ${unknown.interrupt_id}`);
    }
    const resume = Object.fromEntries(answers.map((answer) => [answer.interrupt_id, answer.response ?? null]));
    await this.runs.create(
      threadId,
      decorate(
        protocolRun({
          assistant_id: latest.assistant_id,
          command: {
            resume,
            ...(params.update !== undefined ? { update: params.update } : {}),
            ...(params.goto !== undefined ? { goto: params.goto } : {}),
          },
          config: (params.config ?? null) as JsonObject | null,
          metadata: (params.metadata ?? null) as JsonObject | null,
          multitask_strategy: "enqueue",
        }),
      ),
      access,
    );
    return {};
  }

  private async state(threadId: string, params: z.infer<typeof StateGetParams>, access: Access): Promise<unknown> {
    const state = await this.graphState.get(threadId, undefined, false, access).catch(notFoundAs("invalid_argument"));
    let values = state.values;
    if (params.keys && values && typeof values === "object" && !Array.isArray(values)) {
      const wanted = new Set(params.keys);
      values = Object.fromEntries(Object.entries(values).filter(([key]) => wanted.has(key)));
    }
    const checkpoint = state.checkpoint
      ? { id: state.checkpoint.checkpoint_id, ...(state.checkpoint.checkpoint_ns ? { ns: state.checkpoint.checkpoint_ns } : {}) }
      : undefined;
    return { values, ...(checkpoint ? { checkpoint } : {}) };
  }

  /** The tree of graphs and subgraphs the thread's latest protocol run went through, from its lifecycle events. */
  private async tree(threadId: string, access: Access): Promise<unknown> {
    const runs = await this.runs.list(threadId, { limit: 20, offset: 0 }, access).catch(notFoundAs("no_such_run"));
    const latest = runs.find((run) => run.kwargs.stream_protocol === "v2");
    if (!latest) throw new ProtocolCommandError("no_such_run", "No protocol run was started on this thread");
    const nodes = new Map<string, AgentTreeNode>();
    const root: AgentTreeNode = { namespace: [], status: "running", graph_name: "root" };
    nodes.set("", root);
    for (const event of await this.eventsSoFar(latest.run_id, latest.status)) {
      if (event.event !== PROTOCOL_EVENT) continue;
      const parsed = JSON.parse(event.data) as { method: string; params: { namespace: string[]; data: Record<string, unknown> } };
      if (parsed.method !== "lifecycle") continue;
      const node = nodeAt(nodes, parsed.params.namespace);
      node.status = String(parsed.params.data.event);
      if (typeof parsed.params.data.graph_name === "string") node.graph_name = parsed.params.data.graph_name;
    }
    return { tree: root };
  }

  /**
   * Every event the run produced until now. The log of a run in progress lags
   * live delivery by a batch, and a client may ask right after an event
   * reached it: the run's events are followed up to the last one produced.
   */
  private async eventsSoFar(runId: string, status: RunStatus): Promise<StoredEvent[]> {
    if (TERMINAL_RUN_STATUSES.has(status)) return this.storage.runs.readEvents(runId, -1);
    const through = await this.broker.lastSeq(runId);
    const events: StoredEvent[] = [];
    if (through < 0) {
      // No live event known: not started yet, or it ended since `status` was read (its log is then complete).
      const current = await this.storage.runs.get(runId);
      return current && TERMINAL_RUN_STATUSES.has(current.status) ? this.storage.runs.readEvents(runId, -1) : events;
    }
    const followed = await followRun(runId, -1, { runs: this.storage.runs, broker: this.broker });
    for await (const event of followed) {
      events.push(event);
      if (event.seq >= through) break;
    }
    return events;
  }

  private async checkReadable(threadId: string, access: Access): Promise<void> {
    const { scope } = await access.authorize("threads:read", { thread_id: threadId });
    if (!scope) return;
    if (!(await this.storage.threads.get(threadId, scope)) && (await this.storage.threads.get(threadId))) {
      throw new NotFoundError("Thread not found");
    }
  }
}

/** A run started through the protocol: the reference's stream settings, created with its thread if missing. */
function protocolRun(
  input: Pick<RunCreateInput, "assistant_id" | "input" | "command" | "config" | "context" | "metadata" | "checkpoint_id"> & {
    multitask_strategy: MultitaskStrategy;
  },
): RunCreateInput {
  return {
    ...input,
    stream_mode: PROTOCOL_STREAM_MODES,
    stream_subgraphs: true,
    stream_resumable: true,
    if_not_exists: "create",
    on_disconnect: "continue",
    stream_protocol: "v2",
  };
}

/** The node of `namespace` in the tree, made with its parents when first seen. */
function nodeAt(nodes: Map<string, AgentTreeNode>, namespace: string[]): AgentTreeNode {
  const key = namespace.join("\u0000");
  const known = nodes.get(key);
  if (known) return known;
  const parent = nodeAt(nodes, namespace.slice(0, -1));
  const node: AgentTreeNode = { namespace, status: "started", graph_name: namespace.at(-1)?.split(":")[0] ?? "root" };
  parent.children = [...(parent.children ?? []), node];
  nodes.set(key, node);
  return node;
}

function parse<S extends z.ZodType>(schema: S, params: unknown): z.infer<S> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  throw new ProtocolCommandError("invalid_argument", `${where}${issue.message}`);
}

/** A thread or run the caller cannot see, as the protocol error `code`. */
function notFoundAs(code: ProtocolErrorCode): (error: unknown) => never {
  return (error) => {
    if (error instanceof NotFoundError) throw new ProtocolCommandError(code, error.message);
    throw error;
  };
}

/** A command's failure in the protocol's shape: HTTP errors of the services become protocol error codes. */
function protocolError(id: number, error: unknown): ProtocolReply {
  if (error instanceof ProtocolCommandError) return { type: "error", id, error: error.code, message: error.message };
  if (error instanceof NotFoundError || error instanceof ConflictError) {
    return { type: "error", id, error: "invalid_argument", message: error.message };
  }
  if (error instanceof HttpStatusError) {
    const code = error.status === 401 || error.status === 403 ? "permission_denied" : "invalid_argument";
    return { type: "error", id, error: code, message: error.message };
  }
  return { type: "error", id, error: "unknown_error", message: error instanceof Error ? error.message : String(error) };
}
