import { newId } from "./ids.js";
import type { GraphRegistry } from "../graphs/registry.js";
import type { SlotReservation } from "../runs/execution/worker.js";
import { followRun, type RunFollower } from "../runs/streaming/follow-run.js";
import { followThread, parseThreadEventId } from "../runs/streaming/follow-thread.js";
import type { RunBroker, RunEndNotice, SubscribeOptions } from "../runs/brokers/broker.js";
import { toApiRun } from "../storage/run-record.js";
import { createdThread } from "../storage/shared/created-thread.js";
import {
  type Assistant,
  type CancelAction,
  type JsonObject,
  type MultitaskStrategy,
  type NewRun,
  type QueuedRun,
  type Run,
  type RunKwargs,
  type RunStatus,
  type Storage,
  type StoredEvent,
  TERMINAL_RUN_STATUSES,
} from "../storage/types.js";
import type { AssistantService } from "./assistants.js";
import { type Access, metadataOf } from "./authorization.js";
import { checkRunInput } from "./run-input.js";
import type { WebhookService } from "./webhooks.js";
import { ConflictError, NotFoundError } from "@berth/service-kit";

export interface RunCreateInput {
  assistant_id: string;
  input?: unknown;
  command?: Record<string, unknown> | null;
  config?: JsonObject | null;
  context?: JsonObject | null;
  metadata?: JsonObject | null;
  checkpoint?: JsonObject | null;
  checkpoint_id?: string | null;
  interrupt_before?: "*" | string[] | null;
  interrupt_after?: "*" | string[] | null;
  stream_mode: string[];
  stream_subgraphs: boolean;
  stream_resumable: boolean;
  multitask_strategy: MultitaskStrategy;
  if_not_exists: "reject" | "create";
  after_seconds?: number | null;
  on_completion?: "delete" | "keep" | null;
  on_disconnect: "cancel" | "continue";
  webhook?: string | null;
  durability?: string | null;
  feedback_keys?: string[] | null;
  /** Started through protocol v2: its events are the thread's protocol events. */
  stream_protocol?: "v2";
}

/** Rejects a watch that is cancelled (every run's, once its answer is out): one error, as capturing a stack per run costs. */
const STOPPED_WATCHING = new Error("stopped watching the run");

export class RunService {
  constructor(
    private readonly storage: Storage,
    private readonly graphs: GraphRegistry,
    private readonly assistants: AssistantService,
    private readonly broker: RunBroker,
    private readonly webhooks?: WebhookService,
    /** A slot of this process's worker, when it has one free: the run's creation claims the run for it. */
    private readonly reserveSlot?: () => SlotReservation | undefined,
  ) {}

  /**
   * Creates a run and follows its events from before its creation, so not even
   * its first event can be missed (a stateless run may finish and vanish before
   * the caller looks).
   */
  async startStreaming(
    threadId: string | undefined,
    input: RunCreateInput,
    options: { signal: AbortSignal; access: Access },
  ): Promise<{ run: Run; events: AsyncGenerator<StoredEvent> }> {
    const runId = newId();
    const events = await this.follow(runId, -1, options.signal, { creating: true });
    try {
      return { run: await this.create(threadId, input, options.access, runId, events.created), events };
    } catch (error) {
      await events.return(undefined);
      throw error;
    }
  }

  /** Creates a run and watches its end from before its creation, for `output` (a stateless run may end before the caller looks). */
  async startWaiting(
    threadId: string | undefined,
    input: RunCreateInput,
    options: { access: Access },
  ): Promise<{ run: Run; ended: EndWatch }> {
    const runId = newId();
    const ended = await this.watchEnd(runId, { creating: true });
    try {
      return { run: await this.create(threadId, input, options.access, runId, ended.created), ended };
    } catch (error) {
      ended.cancel();
      throw error;
    }
  }

  /** The output of a run started with `startWaiting`. */
  async output(run: Run, ended: EndWatch): Promise<unknown> {
    try {
      return await this.endedOutput(run.run_id, await ended.promise);
    } finally {
      ended.cancel();
    }
  }

  /**
   * Creates a run on a thread, or a stateless run (a temporary thread) when `threadId` is undefined. `created`:
   * told once the run exists whether it executes in this process (a subscription made before, RunSubscription).
   */
  async create(
    threadId: string | undefined,
    input: RunCreateInput,
    access: Access,
    runId: string = newId(),
    created?: (executingHere: boolean) => void,
  ): Promise<Run> {
    const { run, assistant } = await this.prepared(threadId, input, access, runId);
    const slot = this.reserveSlot?.();
    const result = await this.storage.runs.create(run, slot?.claimant).catch((error: unknown) => {
      slot?.release();
      throw error;
    });
    if (result.kind === "created" && result.claimed && slot) {
      const thread = result.thread ?? (threadId === undefined ? createdThread(run, result.claimed.created_at) : undefined);
      slot.execute({
        ...result.claimed,
        claimedAtCreation: true,
        assistant,
        thread,
        threadCheckpointed: result.threadCheckpointed,
      });
      created?.(true);
      return result.run;
    }
    slot?.release();
    if (result.kind === "created") created?.(false);
    if (result.kind === "thread_not_found") throw new NotFoundError("Thread not found");
    if (result.kind === "thread_busy") {
      throw new ConflictError(
        "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.",
      );
    }
    await this.created(run, result.inflight);
    return result.run;
  }

  /**
   * The run to insert for `input` (a 404 when its assistant or graph is
   * unknown, a 422 when the graph refuses its input), without inserting it:
   * a cron inserts it with the claim of its tick.
   */
  async prepare(
    threadId: string | undefined,
    input: RunCreateInput,
    access: Access,
    runId: string = newId(),
    threadMetadata?: JsonObject,
  ): Promise<NewRun> {
    return (await this.prepared(threadId, input, access, runId, threadMetadata)).run;
  }

  /** `prepare`, with the assistant it read (a run claimed on creation here is executed with it). */
  private async prepared(
    threadId: string | undefined,
    input: RunCreateInput,
    access: Access,
    runId: string,
    threadMetadata?: JsonObject,
  ): Promise<{ run: NewRun; assistant: Assistant }> {
    // First: a webhook the URL policy refuses is a 422 before anything else is looked up or written.
    if (input.webhook) this.webhooks?.check(input.webhook);
    const authorized = await access.authorize("threads:create_run", {
      thread_id: threadId,
      assistant_id: input.assistant_id,
      run_id: runId,
      status: "pending",
      metadata: { ...input.metadata },
      prevent_insert_if_inflight: false,
      multitask_strategy: input.multitask_strategy,
      if_not_exists: input.if_not_exists,
      after_seconds: input.after_seconds ?? 0,
      kwargs: { ...input },
    });
    // Another user's thread is not found, even where the run would create a missing one.
    if (threadId !== undefined && authorized.scope && !(await this.storage.threads.get(threadId, authorized.scope))) {
      if (await this.storage.threads.get(threadId)) throw new NotFoundError("Thread not found");
    }
    const metadata = metadataOf(authorized.value);
    const assistant = await this.assistants.forRun(input.assistant_id, access).catch((error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
      throw new NotFoundError(
        `No assistant found for "${input.assistant_id}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`,
      );
    });
    if (!this.graphs.has(assistant.graph_id)) throw new NotFoundError(`Graph "${assistant.graph_id}" not found`);
    await this.checkInput(assistant, input);
    const stateless = threadId === undefined;
    // The metadata a handler authorized (an owner it stamped) is the thread's too, when the run creates it.
    const stamped = authorized.handled ? metadata : undefined;
    const checkpoint = input.checkpoint ?? (input.checkpoint_id ? { checkpoint_id: input.checkpoint_id } : null);
    const kwargs: RunKwargs = {
      input: input.input ?? null,
      command: input.command ?? null,
      config: input.config ?? {},
      context: input.context ?? {},
      stream_mode: input.stream_mode,
      stream_subgraphs: input.stream_subgraphs,
      stream_resumable: input.stream_resumable,
      interrupt_before: input.interrupt_before ?? null,
      interrupt_after: input.interrupt_after ?? null,
      checkpoint,
      webhook: input.webhook ?? null,
      feedback_keys: input.feedback_keys ?? null,
      on_disconnect: input.on_disconnect,
      on_completion: input.on_completion ?? (stateless ? "delete" : "keep"),
      temporary: stateless,
      durability: input.durability ?? null,
      ...(input.stream_protocol ? { stream_protocol: input.stream_protocol } : {}),
    };
    const run: NewRun = {
      run_id: runId,
      thread_id: threadId ?? newId(),
      assistant_id: assistant.assistant_id,
      graph_id: assistant.graph_id,
      metadata,
      multitask_strategy: input.multitask_strategy,
      kwargs,
      available_at: Date.now() + Math.max(0, input.after_seconds ?? 0) * 1000,
      create_thread: stateless || input.if_not_exists === "create",
      ...(threadMetadata || stamped ? { thread_metadata: { ...stamped, ...threadMetadata } } : {}),
    };
    return { run, assistant };
  }

  /** After a prepared run was inserted: cancels the runs its multitask strategy interrupts, and wakes a worker. */
  async created(run: NewRun, inflight: Run[]): Promise<void> {
    if (run.multitask_strategy === "interrupt" || run.multitask_strategy === "rollback") {
      for (const active of inflight) await this.cancelRun(active, run.multitask_strategy);
    }
    this.broker.wakeWorkers(run.available_at);
  }

  /**
   * The API's view of a run (without the queue's bookkeeping), if the user may
   * read (or update, to cancel it) its thread: another user's run is not found.
   */
  async get(threadId: string | undefined, runId: string, access: Access, action: "read" | "update" = "read"): Promise<Run> {
    const { scope } = await access.authorize(`threads:${action}`, { thread_id: threadId, run_id: runId });
    const run = await this.storage.runs.get(runId);
    if (!run || (threadId !== undefined && run.thread_id !== threadId)) throw new NotFoundError("Run not found");
    if (scope && !(await this.storage.threads.get(run.thread_id, scope))) throw new NotFoundError("Run not found");
    return toApiRun(run);
  }

  /** The sequence number of the run's latest event so far (-1 when none). */
  async lastSeq(runId: string): Promise<number> {
    // An attempt numbers its events above every earlier attempt's, and publishes each before logging it: once the
    // attempt executing here has one, it is the latest, and no read of the log or the broker can say more.
    const executing = this.broker.executingLastSeq(runId);
    if (executing !== undefined && executing >= 0) return executing;
    return Math.max(await this.storage.runs.lastEventSeq(runId), await this.broker.lastSeq(runId));
  }

  async list(threadId: string, query: { limit: number; offset: number; status?: RunStatus }, access: Access): Promise<Run[]> {
    const { scope } = await access.authorize("threads:search", { thread_id: threadId, status: query.status });
    if (!(await this.storage.threads.get(threadId, scope))) throw new NotFoundError("Thread not found");
    return this.storage.runs.list(threadId, query);
  }

  async delete(threadId: string, runId: string, access: Access): Promise<void> {
    const { scope } = await access.authorize("threads:delete", { thread_id: threadId, run_id: runId });
    const run = await this.storage.runs.get(runId);
    if (!run || run.thread_id !== threadId || (scope && !(await this.storage.threads.get(threadId, scope)))) {
      throw new NotFoundError("Run not found");
    }
    if (!TERMINAL_RUN_STATUSES.has(run.status)) {
      throw new ConflictError(`Run ${runId} is ${run.status}: cancel it before deleting it`);
    }
    await this.storage.runs.delete(runId);
  }

  /** Cancels a run; with `wait`, resolves once it has stopped. */
  async cancel(run: Run, action: CancelAction, wait: boolean): Promise<void> {
    const ended = await this.watchEnd(run.run_id);
    try {
      const current = await this.storage.runs.get(run.run_id);
      if (!current || TERMINAL_RUN_STATUSES.has(current.status)) return; // already over: nothing to cancel
      await this.cancelRun(current, action);
      if (wait) await ended.promise;
    } finally {
      ended.cancel();
    }
  }

  async cancelMany(
    filter: { thread_id?: string; run_ids?: string[]; status?: "pending" | "running" | "all" },
    action: CancelAction,
    access: Access,
  ) {
    const { scope } = await access.authorize("threads:update", { thread_id: filter.thread_id, action });
    const active = await this.storage.runs.findActive(filter);
    const runs = scope ? await this.inScope(active, scope) : active;
    if (filter.run_ids) {
      const found = new Set(runs.map((run) => run.run_id));
      const missing = filter.run_ids.filter((id) => !found.has(id));
      if (missing.length > 0) throw new NotFoundError(`Runs not found or not active: ${missing.join(", ")}`);
    }
    // Queued runs first: a running run that ends hands its thread to the next queued one at once.
    const queuedFirst = [...runs].sort((a, b) => Number(a.status === "running") - Number(b.status === "running"));
    for (const run of queuedFirst) await this.cancelRun(run, action);
  }

  /** The run's final output (values, or `{__error__}`), once it has ended. */
  async join(run: Run, signal?: AbortSignal): Promise<unknown> {
    const ended = await this.watchEnd(run.run_id);
    const abort = () => ended.cancel();
    signal?.addEventListener("abort", abort, { once: true });
    try {
      const current = await this.storage.runs.get(run.run_id);
      if (!current) throw new NotFoundError("Run not found");
      if (TERMINAL_RUN_STATUSES.has(current.status)) return this.outputOf(current);
      return await this.endedOutput(run.run_id, await ended.promise);
    } finally {
      signal?.removeEventListener("abort", abort);
      ended.cancel();
    }
  }

  /** Events of a run after `lastEventId` (-1: from the start). */
  follow(runId: string, lastEventId: number, signal?: AbortSignal, options?: SubscribeOptions): Promise<RunFollower> {
    return followRun(runId, lastEventId, { runs: this.storage.runs, broker: this.broker }, signal, options);
  }

  /** Every run of the thread from now on (or from a thread stream's Last-Event-ID). */
  async followThread(threadId: string, lastEventId: string | undefined, signal: AbortSignal, access: Access) {
    const { scope } = await access.authorize("threads:read", { thread_id: threadId });
    if (!(await this.storage.threads.get(threadId, scope))) throw new NotFoundError("Thread not found");
    return followThread(threadId, parseThreadEventId(lastEventId), { runs: this.storage.runs, broker: this.broker }, signal);
  }

  /** The runs whose thread is in the scope. */
  private async inScope(runs: Run[], scope: JsonObject): Promise<Run[]> {
    const visible = new Map<string, boolean>();
    const kept: Run[] = [];
    for (const run of runs) {
      if (!visible.has(run.thread_id)) visible.set(run.thread_id, !!(await this.storage.threads.get(run.thread_id, scope)));
      if (visible.get(run.thread_id)) kept.push(run);
    }
    return kept;
  }

  /** The output recorded with the run's end; without one (a run cancelled before it started), the thread's values. */
  private async endedOutput(runId: string, notice: RunEndNotice): Promise<unknown> {
    if (notice.output !== null && notice.output !== undefined) return notice.output;
    const after = await this.storage.runs.get(runId);
    return after ? this.outputOf(after) : notice.output;
  }

  private async outputOf(run: QueuedRun): Promise<unknown> {
    if (run.output !== null && run.output !== undefined) return run.output;
    return (await this.storage.threads.get(run.thread_id))?.values ?? null;
  }

  /**
   * Input the graph rejects is a 422 before the run exists (see run-input.ts).
   * A graph factory that fails here is not the input's fault: the run is
   * created and fails with that error.
   */
  private async checkInput(assistant: Assistant, input: RunCreateInput): Promise<void> {
    if (!isObject(input.input) && !isObject(input.command?.update)) return;
    const configurable = {
      ...(assistant.config.configurable as JsonObject | undefined),
      ...(input.config?.configurable as JsonObject | undefined),
      assistant_id: assistant.assistant_id,
    };
    const graph = await this.graphs.get(assistant.graph_id, { configurable }).catch(() => undefined);
    if (graph) await checkRunInput(graph, input.input, input.command);
  }

  private async cancelRun(run: Run, action: CancelAction): Promise<void> {
    const current = await this.storage.runs.get(run.run_id);
    if (current?.status === "running") {
      // Kept with the run, so the attempt that executes it next honours it should the one executing it now be gone.
      if (await this.storage.runs.requestCancel(run.run_id, action)) this.broker.cancel(run.run_id, action);
      else if ((await this.storage.runs.get(run.run_id))?.status === "pending") await this.cancelRun(run, action);
      return;
    }
    if (current?.status !== "pending") return;
    if (action === "rollback") {
      await this.storage.runs.discard(run.run_id, await this.threadSummary(run.thread_id));
    } else if (!(await this.storage.runs.cancelPending(run.run_id))) {
      // It started meanwhile: abort the execution instead.
      this.broker.cancel(run.run_id, action);
      return;
    }
    this.broker.end(run.run_id, { status: "interrupted", output: null });
  }

  private async threadSummary(threadId: string) {
    const thread = await this.storage.threads.get(threadId);
    return {
      values: thread?.values ?? null,
      interrupts: thread?.interrupts ?? {},
      status: thread?.status === "error" ? ("error" as const) : ("idle" as const),
    };
  }

  /** A promise of the run's end notice; subscribe before checking the database to miss nothing. */
  private async watchEnd(runId: string, options?: SubscribeOptions): Promise<EndWatch> {
    let resolve!: (notice: RunEndNotice) => void;
    let reject!: (reason: Error) => void;
    const promise = new Promise<RunEndNotice>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => {}); // a cancelled watch nobody awaits is fine
    const subscription = await this.broker.subscribe(runId, { onEvent: () => {}, onEnd: (notice) => resolve(notice) }, options);
    return {
      promise,
      created: (executingHere) => subscription.created?.(executingHere),
      cancel: () => {
        subscription.unsubscribe();
        reject(STOPPED_WATCHING);
      },
    };
  }
}

function isObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export interface EndWatch {
  promise: Promise<RunEndNotice>;
  /** Watched from before its creation: the creation is over (RunSubscription.created). */
  created(executingHere: boolean): void;
  cancel(): void;
}
