// Terminology: "storage" is everything the server keeps (this folder: the Storage interface, its SQLite and PostgreSQL
// backends); the "store" is one part of it, LangGraph's long-term memory store (memory-store-types.ts here, its rules
// in src/memory/), named as the API and LangGraph name it (/store routes, StoreRepository, ItemStore).
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { JsonObject } from "./json.js";
import type { Cron, CronFilter, CronQuery, CronTick, CronUpdate, NewCron } from "./cron-types.js";
import type { StoreRepository } from "./memory-store-types.js";

export type { JsonObject };

export type SortOrder = "asc" | "desc";

/**
 * What an authorization handler lets a request reach: only resources whose
 * metadata contains this document (JSON containment, PostgreSQL's `@>`). The
 * repositories apply it in the query of the operation itself; absent, every
 * resource is reachable.
 */
export type MetadataScope = JsonObject;

export interface Assistant {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: JsonObject;
  context: JsonObject;
  metadata: JsonObject;
  version: number;
  created_at: string;
  updated_at: string;
}

export type AssistantVersion = Omit<Assistant, "updated_at">;

export interface NewAssistant {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: JsonObject;
  context: JsonObject;
  metadata: JsonObject;
}

export interface AssistantPatch {
  graph_id?: string;
  name?: string;
  description?: string | null;
  config?: JsonObject;
  context?: JsonObject;
  /** Merged into the current metadata. */
  metadata?: JsonObject;
}

export interface AssistantFilter {
  scope?: MetadataScope;
  graph_id?: string;
  /** Case-insensitive substring of the name. */
  name?: string;
  /** JSON containment. */
  metadata?: JsonObject;
}

export interface AssistantQuery extends AssistantFilter {
  limit: number;
  offset: number;
  sort_by: "assistant_id" | "graph_id" | "name" | "created_at" | "updated_at";
  sort_order: SortOrder;
}

export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";

export interface Interrupt {
  id?: string;
  value: unknown;
}

export interface Thread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: JsonObject;
  status: ThreadStatus;
  config: JsonObject;
  values: JsonObject | null;
  /** Pending interrupts of the current state, keyed by task id. */
  interrupts: Record<string, Interrupt[]>;
}

/** What a run takes from its thread: the metadata and config it executes with. */
export type RunThread = Pick<Thread, "metadata" | "config">;

export interface NewThread {
  thread_id: string;
  metadata: JsonObject;
  config?: JsonObject;
  /** Minutes until the thread expires (then it is deleted); absent or null: never. */
  ttl_minutes?: number | null;
}

export interface ThreadFilter {
  scope?: MetadataScope;
  ids?: string[];
  status?: ThreadStatus;
  metadata?: JsonObject;
  values?: JsonObject;
}

export interface ThreadQuery extends ThreadFilter {
  limit: number;
  offset: number;
  sort_by: "thread_id" | "status" | "created_at" | "updated_at";
  sort_order: SortOrder;
}

/** The state a thread shows after its graph advanced (a run, a state update). */
export interface ThreadStateSummary {
  values: JsonObject | null;
  interrupts: Record<string, Interrupt[]>;
  status?: ThreadStatus;
}

export interface AssistantRepository {
  /** Inserts the assistant and its version 1; returns undefined when the id is taken. */
  create(assistant: NewAssistant): Promise<Assistant | undefined>;
  get(assistantId: string, scope?: MetadataScope): Promise<Assistant | undefined>;
  /** Applies the patch as a new version that becomes current. */
  patch(assistantId: string, patch: AssistantPatch, scope?: MetadataScope): Promise<Assistant | undefined>;
  delete(assistantId: string, scope?: MetadataScope): Promise<boolean>;
  search(query: AssistantQuery): Promise<{ items: Assistant[]; total: number }>;
  count(filter: AssistantFilter): Promise<number>;
  versions(assistantId: string, query: { limit: number; offset: number; metadata?: JsonObject }): Promise<AssistantVersion[]>;
  /** Makes an existing version current again; undefined when the version does not exist. */
  setLatest(assistantId: string, version: number, scope?: MetadataScope): Promise<Assistant | undefined>;
}

export interface ThreadRepository {
  /** Inserts the thread; returns undefined when the id is taken. */
  create(thread: NewThread): Promise<Thread | undefined>;
  get(threadId: string, scope?: MetadataScope): Promise<Thread | undefined>;
  /** Merges metadata; a `ttlMinutes` number restarts the expiry from now, null removes it, undefined keeps it. */
  patch(threadId: string, metadata: JsonObject, ttlMinutes?: number | null, scope?: MetadataScope): Promise<Thread | undefined>;
  /** Deletes the thread with its checkpoints. */
  delete(threadId: string, scope?: MetadataScope): Promise<boolean>;
  /** Expired threads are left out (as from `count`), even before the sweeper deletes them. */
  search(query: ThreadQuery): Promise<{ items: Thread[]; total: number }>;
  count(filter: ThreadFilter): Promise<number>;
  /** Deletes at most `limit` expired threads that are not busy, as `delete` does; how many it deleted. */
  sweepExpired(limit: number): Promise<number>;
  /** Creates `targetId` with the source's config and values, `metadata` (the source's when undefined), and a copy of its checkpoints. */
  copy(sourceId: string, targetId: string, scope?: MetadataScope, metadata?: JsonObject): Promise<Thread | undefined>;
  /** Records the state the thread shows after its graph advanced. */
  setState(threadId: string, state: ThreadStateSummary): Promise<void>;
  /** Ids of threads whose metadata contains the filter. */
  idsByMetadata(filter: JsonObject): Promise<string[]>;
  /**
   * `delete`: deletes the threads as `delete` does; `keep_latest`: keeps each
   * thread's newest checkpoint (per namespace) and drops the older ones with
   * their writes and channel values. Returns how many of the ids were threads.
   */
  prune(threadIds: string[], strategy: PruneStrategy, scope?: MetadataScope): Promise<number>;
}

export type PruneStrategy = "delete" | "keep_latest";

/** The checkpointer plus the thread-wide operations the server needs from it. */
export interface BerthCheckpointer extends BaseCheckpointSaver {
  copyThread(sourceThreadId: string, targetThreadId: string): void | Promise<void>;
  deleteRun(threadId: string, runId: string): void | Promise<void>;
  /**
   * Keeps the newest checkpoint of each namespace of the thread (its parent
   * link cleared) and deletes older checkpoints, their writes, and channel
   * values older than those the kept checkpoints name. Safe beside a run
   * that writes newer checkpoints: nothing newer than what was kept is touched.
   */
  keepLatest(threadId: string): Promise<void>;
}

/** A run attempt a worker holds: its lease is renewed while the worker executes it. */
export interface HeldRun {
  run_id: string;
  attempt: number;
}

/**
 * One claim of a run: the worker that holds it and the attempt. Ending a run,
 * handing it back and logging its events are checked against it, so a worker
 * that lost its lease (its run was requeued and claimed again) changes nothing.
 */
export interface RunLease {
  owner: string;
  attempt: number;
}

/** Renews the leases of the runs a worker holds, until stopped. */
export interface LeaseRenewal {
  /** Starts renewing the run's lease (just claimed). */
  hold(run: HeldRun): void;
  /** Stops renewing it (ended, handed back, or given up). */
  drop(runId: string): void;
  stop(): Promise<void>;
}

/** What a lease keeper reports. */
export interface LeaseEvents {
  /** Runs whose lease was found taken (requeued by a sweeper, maybe claimed again): their execution must stop. */
  lost(runIds: string[]): void;
  /** A renewal failed (the next one tries again). */
  failed(message: string): void;
}

/** Renews `owner`'s leases every third of `leaseMs`. */
export type LeaseKeeper = (owner: string, leaseMs: number, events: LeaseEvents) => LeaseRenewal;

/** What `Storage.truncate` empties. */
export interface TruncateParts {
  /** Runs, their event logs and webhook deliveries, and crons; threads they left busy become idle. */
  runs: boolean;
  /** Threads, with their runs and checkpoints. */
  threads: boolean;
  /** Assistants, except those whose ids are kept. */
  assistants: boolean;
  /** Every checkpoint, of every thread. */
  checkpointer: boolean;
  /** The long-term memory store: every item, with its vectors. */
  store: boolean;
}

/** Rows of one part and the bytes they take, as the backend measures them. */
export interface PartSize {
  count: number;
  bytes: number;
}

/**
 * What the database holds, for operators. SQLite: row counts and the summed
 * length of the stored columns. PostgreSQL: row counts and the tables' total
 * relation size (indexes and TOAST included); the store counts live items.
 */
export interface StorageSizes {
  backend: "sqlite" | "postgres";
  threads: PartSize;
  /** Checkpoints counted; bytes of checkpoints, their writes and channel values. */
  checkpoints: PartSize;
  store_items: PartSize;
  /** Logged stream events of every run. */
  run_events: PartSize;
}

export interface Storage {
  /**
   * Renews leases off the main thread, so a graph blocking the event loop
   * cannot let them lapse; without it the worker renews them on its timer.
   */
  readonly keepLeases?: LeaseKeeper;
  readonly assistants: AssistantRepository;
  readonly threads: ThreadRepository;
  readonly runs: RunRepository;
  /**
   * LangGraph's checkpointer on this database, made at the first call: that
   * loads LangGraph's checkpoint modules, which a server answering its first
   * requests may not need yet.
   */
  checkpointer(): Promise<BerthCheckpointer>;
  /** LangGraph's long-term memory store (memory-store-types.ts). */
  readonly store: StoreRepository;
  /** Scheduled runs (cron-types.ts). */
  readonly crons: CronRepository;
  /** Webhook deliveries waiting to be sent, and what became of them. */
  readonly webhooks: WebhookOutbox;
  /** Empties the given parts at once (a test suite's reset between tests); `keepAssistantIds` survive. */
  truncate(parts: TruncateParts, keepAssistantIds: string[]): Promise<void>;
  /** Counts and bytes of the main parts (scans the tables: callers cache it). */
  sizes(): Promise<StorageSizes>;
  /** Runs queued and executing, every process of the database counted (GET /metrics; run-counts.ts). */
  runCounts(): Promise<RunCounts>;
  close(): Promise<void>;
}

/** Runs by queue state across every process sharing the database. */
export interface RunCounts {
  /** Pending runs a worker may claim now (those delayed by `after_seconds` not yet). */
  pending: number;
  running: number;
  /** When the earliest delayed pending run becomes due (ms since the epoch); null: none is delayed. */
  nextDelayedAt: number | null;
}

export type RunStatus = "pending" | "running" | "success" | "error" | "timeout" | "interrupted";

export type MultitaskStrategy = "reject" | "interrupt" | "rollback" | "enqueue";

export type CancelAction = "interrupt" | "rollback";

/** The statuses of a run that ended: it changes no more. */
export const TERMINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(["success", "error", "timeout", "interrupted"]);

/** What a run was created with (the `kwargs` of the API's Run). */
export interface RunKwargs {
  input: unknown;
  command: JsonObject | null;
  config: JsonObject;
  context: JsonObject;
  stream_mode: string[];
  stream_subgraphs: boolean;
  stream_resumable: boolean;
  interrupt_before: "*" | string[] | null;
  interrupt_after: "*" | string[] | null;
  checkpoint: JsonObject | null;
  webhook: string | null;
  feedback_keys: string[] | null;
  /** One pre-signed feedback URL per feedback key, once the run ended (only when tracing made them). */
  feedback_urls?: Record<string, string>;
  on_disconnect: "cancel" | "continue";
  on_completion: "delete" | "keep";
  temporary: boolean;
  durability: string | null;
  /** Set on runs started through protocol v2: their events are the thread's protocol events, numbered per thread. */
  stream_protocol?: "v2";
}

/** The ids that name a run wherever it shows: configurable, metadata, checkpoints, traces. */
export interface RunIds {
  thread_id: string;
  run_id: string;
  graph_id: string;
  assistant_id: string;
}

export interface Run {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: RunStatus;
  metadata: JsonObject;
  multitask_strategy: MultitaskStrategy;
  kwargs: RunKwargs;
}

/** A run with the bookkeeping the queue keeps beside the API fields. */
export interface QueuedRun extends Run {
  /** Executions started so far (each claim counts). */
  attempt: number;
  /** Attempts handed back to the queue by a graceful shutdown: not counted against the attempt limit. */
  handovers: number;
  /** A cancel asked while the run was running: whichever attempt executes it next honours it. */
  cancel_action: CancelAction | null;
  /** Epoch ms before which the run must not start (`after_seconds`). */
  available_at: number;
  /** Final values, or `{__error__}`, once the run ended. */
  output: unknown;
}

export interface NewRun {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  graph_id: string;
  metadata: JsonObject;
  multitask_strategy: MultitaskStrategy;
  kwargs: RunKwargs;
  available_at: number;
  /** Create the thread when it does not exist (stateless runs, `if_not_exists: create`). */
  create_thread: boolean;
  /** Thread config recorded when the thread is created here. */
  thread_config?: JsonObject;
  /** Metadata the thread gets beside graph_id and assistant_id when it is created here (a cron's runs: cron_id). */
  thread_metadata?: JsonObject;
}

/**
 * What claiming a cron's tick did. `taken`: another process claimed it first
 * (or the cron changed meanwhile): nothing written. `claimed`: the tick is
 * consumed, and `run` is what creating its run gave (absent when none was
 * asked: the cron is past its end_time, or its run could not be prepared).
 */
export type CronFireResult = { kind: "taken" } | { kind: "claimed"; run?: CreateRunResult };

export interface CronRepository {
  /** Inserts the cron; undefined when its assistant or thread does not exist (any more). */
  create(cron: NewCron): Promise<Cron | undefined>;
  get(cronId: string, scope?: MetadataScope): Promise<Cron | undefined>;
  /** Replaces the given fields (updated_at stamped); undefined when there is no such cron. */
  update(cronId: string, update: CronUpdate, scope?: MetadataScope): Promise<Cron | undefined>;
  delete(cronId: string, scope?: MetadataScope): Promise<boolean>;
  search(query: CronQuery): Promise<{ items: Cron[]; total: number }>;
  count(filter: CronFilter): Promise<number>;
  /** Enabled crons whose next_run_date is at or before `now` (ISO), the most overdue first. */
  due(now: string, limit: number): Promise<Cron[]>;
  /** The earliest next_run_date of an enabled cron (epoch ms), or null when none is scheduled: when to look next. */
  nextDueAt(): Promise<number | null>;
  /**
   * Claims the tick (moves next_run_date from `tick.due` to `tick.next`, only
   * while it still is `tick.due` and the cron is enabled) and creates `run` in
   * the same transaction: of processes claiming one tick exactly one succeeds,
   * and a claim never commits without its run (a run refused because its
   * thread is busy or gone is reported, the tick consumed).
   */
  fire(tick: CronTick, run: NewRun | undefined): Promise<CronFireResult>;
}

export type CreateRunResult =
  /**
   * `claimed`: the run as claimed for the creator's worker, when the creation claimed it (see RunRepository.create);
   * with it `thread`, when the store read the thread's metadata and config on the way (not a thread it created), and
   * `threadCheckpointed`, when the store knows whether the thread had a root checkpoint as the run claimed it.
   */
  | {
      kind: "created";
      run: Run;
      inflight: Run[];
      claimed?: QueuedRun;
      thread?: RunThread;
      threadCheckpointed?: boolean;
    }
  | { kind: "thread_not_found" }
  | { kind: "thread_busy" };

export interface RunEnd {
  status: Exclude<RunStatus, "pending" | "running">;
  output: unknown;
  /** The thread after the run (`idle` becomes `busy` when more runs wait). */
  thread: ThreadStateSummary;
  /** Delete the run's (temporary) thread with the run, in the same transaction. */
  deleteThread?: boolean;
  /** Feedback URLs made for the run, kept as `kwargs.feedback_urls`. */
  feedbackUrls?: Record<string, string>;
  /** The run's webhook delivery, written to the outbox in the same transaction as the end. */
  webhook?: NewWebhookDelivery;
  /** The last events of the run's log, logged in the same transaction as the end (not when its thread is deleted). */
  events?: StoredEvent[];
}

export interface StoredEvent {
  seq: number;
  event: string;
  /** The JSON text of the data line. */
  data: string;
}

/** A worker that would execute a run at once: its lease owner and lease length. */
export interface RunClaimant {
  owner: string;
  leaseMs: number;
}

export interface RunRepository {
  /**
   * Inserts a run in one transaction with the multitask check: `reject` fails
   * while the thread has a pending or running run. Marks the thread busy and
   * stamps graph_id/assistant_id into its metadata. With `claimFor` (a worker
   * with a free slot), the same transaction may also claim the run for it, as
   * `claim` would (`claimed`): when it can start now and no older run is
   * claimable. A backend may leave it to the queue.
   */
  create(run: NewRun, claimFor?: RunClaimant): Promise<CreateRunResult>;
  get(runId: string): Promise<QueuedRun | undefined>;
  list(threadId: string, query: { limit: number; offset: number; status?: RunStatus }): Promise<Run[]>;
  /** Pending and running runs of a thread, oldest first. */
  inflight(threadId: string): Promise<Run[]>;
  /** Runs matching a bulk cancel. */
  findActive(filter: { thread_id?: string; run_ids?: string[]; status?: "pending" | "running" | "all" }): Promise<Run[]>;
  delete(runId: string): Promise<boolean>;
  /**
   * Atomically claims the oldest startable run: pending, available, and the
   * first in line on a thread with no running run. Increments its attempt.
   * When it claims none, `claimedNone` is told whether any run is pending at
   * all (delayed, or behind another run of its thread): none, and nothing is
   * claimable until a run is created or handed back.
   */
  claim(owner: string, leaseMs: number, claimedNone?: (pendingLeft: boolean) => void): Promise<QueuedRun | undefined>;
  /**
   * Extends the leases `owner` holds: those of `held` (all of the owner's
   * without it). Returns the ids of the `held` runs it no longer holds.
   */
  heartbeat(owner: string, leaseMs: number, held?: HeldRun[]): Promise<string[]>;
  /**
   * Hands the running runs `owner` holds (only `run`'s attempt, when given)
   * back to the queue at a graceful shutdown: the attempt is not counted.
   */
  release(owner: string, run?: HeldRun): Promise<number>;
  /**
   * Puts back to pending the running runs nobody executes any more: those
   * whose lease lapsed or that have no owner, those of `deadOwners`, or all of
   * them (a restart of the only process), except the runs listed in `except`.
   */
  requeueExpired(options: { all: boolean; deadOwners?: string[]; except?: string[] }): Promise<number>;
  /** The owners of the running runs' leases. */
  leaseOwners(): Promise<string[]>;
  /**
   * Ends a running run and records the thread's resulting state, in one
   * transaction. With `lease`, only while that claim still holds the run;
   * false when it did not end it.
   */
  finish(runId: string, end: RunEnd, lease?: RunLease): Promise<boolean>;
  /** Deletes a run that was rolled back and records the thread's resulting state (with `lease`: as `finish`). */
  discard(runId: string, thread: ThreadStateSummary, lease?: RunLease): Promise<boolean>;
  /** Ends a pending run without running it (cancelled before start). */
  cancelPending(runId: string): Promise<boolean>;
  /** Records a cancel of a running run, for the attempt executing it next should this one be gone; false when not running. */
  requestCancel(runId: string, action: CancelAction): Promise<boolean>;
  /** Epoch ms of the earliest pending run that is not yet available, if any. */
  nextAvailableAt(): Promise<number | undefined>;
  /**
   * Logs events (an already logged seq is kept); with `lease`, only while that
   * claim holds the run: false when it does not. With `threadId` (a protocol
   * v2 run), the thread's protocol sequence is raised to the batch's last seq
   * in the same transaction.
   */
  appendEvents(runId: string, events: StoredEvent[], lease?: RunLease, threadId?: string): Promise<boolean>;
  readEvents(runId: string, afterSeq: number): Promise<StoredEvent[]>;
  lastEventSeq(runId: string): Promise<number>;
  /** The protocol events of the thread's runs after `afterSeq`, in order, at most `limit`. */
  readThreadEvents(threadId: string, afterSeq: number, limit: number): Promise<StoredEvent[]>;
  /** The highest protocol seq the thread's runs logged (0: none; it survives the events' pruning). */
  threadEventSeq(threadId: string): Promise<number>;
  /** Deletes the event logs of runs that ended before `endedBefore` (ISO). */
  pruneEvents(endedBefore: string): Promise<number>;
}

/** A webhook delivery written with a run's end. */
export interface NewWebhookDelivery {
  url: string;
  /** The run as JSON at its end (the payload but for `webhook_sent_at`, stamped at each attempt). */
  payload: JsonObject;
  /** Epoch ms after which no retry is scheduled: the delivery fails instead. */
  giveUpAt: number;
}

export type WebhookDeliveryStatus = "pending" | "delivered" | "failed";

/** A run's webhook delivery as users read it (the payload left out). */
export interface WebhookDelivery {
  run_id: string;
  thread_id: string;
  url: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** HTTP status of the last attempt; null before any, or when it got no answer. */
  last_status: number | null;
  last_error: string | null;
  /** When the next attempt is due (ISO), while pending. */
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
}

/** A delivery claimed for an attempt, with what to send. */
export interface ClaimedWebhook extends WebhookDelivery {
  payload: JsonObject;
  /** Epoch ms after which no retry is scheduled. */
  give_up_at: number;
}

/** What an attempt did: delivered, to retry at `nextAttemptAt`, or failed for good. */
export type WebhookAttemptResult =
  | { outcome: "delivered"; status: number }
  | { outcome: "retry"; status: number | null; error: string; nextAttemptAt: number }
  | { outcome: "failed"; status: number | null; error: string };

export interface WebhookOutbox {
  /**
   * Atomically leases up to `limit` due pending deliveries to `owner` for
   * `leaseMs`: due ones nobody holds, or whose lease lapsed (a deliverer that
   * died). No two owners hold a delivery at once.
   */
  claim(owner: string, leaseMs: number, limit: number): Promise<ClaimedWebhook[]>;
  /** Records an attempt and releases the lease, only while `owner` holds it; false when it does not. */
  record(runId: string, owner: string, result: WebhookAttemptResult): Promise<boolean>;
  get(runId: string): Promise<WebhookDelivery | undefined>;
  /** Deletes delivered and failed deliveries last updated before `endedBefore` (ISO). */
  prune(endedBefore: string): Promise<number>;
}
