import { randomUUID } from "node:crypto";
import { NotFoundError } from "@berth/service-kit";
import type { Cron, CronFilter, CronQuery, CronRunCompletion } from "../storage/cron-types.js";
import type { JsonObject, MultitaskStrategy, Storage } from "../storage/types.js";
import { isUuid, systemAssistantId } from "./assistant-ids.js";
import { type Access, metadataOf } from "./authorization.js";
import { nextRunDate } from "./cron-schedule.js";
import type { RunCreateInput, RunService } from "./runs.js";

/** The fields of a run's body a cron keeps in its payload and gives each of its runs. */
export interface CronRunBody {
  input?: unknown;
  config?: JsonObject | null;
  context?: JsonObject | null;
  metadata?: JsonObject | null;
  webhook?: string | null;
  multitask_strategy: MultitaskStrategy;
  interrupt_before?: "*" | string[] | null;
  interrupt_after?: "*" | string[] | null;
  stream_mode: string[];
  stream_subgraphs: boolean;
  stream_resumable: boolean;
  durability?: string | null;
}

export interface CronCreateInput extends CronRunBody {
  assistant_id: string;
  schedule: string;
  timezone?: string | null;
  end_time?: string | null;
  enabled: boolean;
  on_run_completed?: CronRunCompletion | null;
}

/** A PATCH: absent fields stay; `end_time: null` clears it; metadata is merged. */
export type CronPatchInput = Partial<Omit<CronCreateInput, "assistant_id">>;

const RUN_BODY_KEYS = [
  "input",
  "config",
  "context",
  "metadata",
  "webhook",
  "multitask_strategy",
  "interrupt_before",
  "interrupt_after",
  "stream_mode",
  "stream_subgraphs",
  "stream_resumable",
  "durability",
] as const satisfies readonly (keyof CronRunBody)[];

/** Schedule fields whose change (or enabling) reschedules the cron from now. */
const SCHEDULING_KEYS = ["schedule", "timezone", "end_time"] as const;

/** Crons: runs created on a schedule, by the scheduler (cron-scheduler.ts) of every process that executes runs. */
export class CronService {
  /** Called when this process created or rescheduled a cron: its scheduler looks again (set by the server). */
  scheduleChanged: () => void = () => {};

  constructor(
    private readonly storage: Storage,
    private readonly runs: RunService,
  ) {}

  /** A cron on a thread, or a stateless one (a new thread per run) when `threadId` is undefined. */
  async create(threadId: string | undefined, input: CronCreateInput, access: Access): Promise<Cron> {
    const cronId = randomUUID();
    // Complete: the schema gave the run defaults.
    const body = pickRunBody(input) as CronRunBody;
    const { value } = await access.authorize("crons:create", {
      payload: { ...body, assistant_id: input.assistant_id } as JsonObject,
      schedule: input.schedule,
      cron_id: cronId,
      thread_id: threadId,
      user_id: access.user?.identity,
      end_time: input.end_time ?? undefined,
      metadata: { ...input.metadata },
    });
    const metadata = metadataOf(value);
    body.metadata = metadata;
    if (threadId !== undefined && !(await this.storage.threads.get(threadId))) throw new NotFoundError("Thread not found");
    // Checks the thread (the user's), the assistant (an id or a graph id), its graph and the input as a run would be:
    // 404 or 422 now, not at every tick.
    const run = await this.runs.prepare(
      threadId,
      runInput(input.assistant_id, body, threadId === undefined ? "delete" : null),
      access,
    );
    const endTime = normalizeTime(input.end_time);
    const cron = await this.storage.crons.create({
      cron_id: cronId,
      assistant_id: run.assistant_id,
      thread_id: threadId ?? null,
      on_run_completed: threadId === undefined ? (input.on_run_completed ?? "delete") : null,
      end_time: endTime,
      schedule: input.schedule,
      timezone: input.timezone ?? null,
      payload: { assistant_id: run.assistant_id, ...body } as JsonObject,
      user_id: access.user?.identity ?? null,
      next_run_date: input.enabled ? nextRunDate(input.schedule, input.timezone ?? null, new Date(), endTime) : null,
      metadata,
      enabled: input.enabled,
    });
    if (!cron) throw new NotFoundError(threadId === undefined ? "Assistant not found" : "Thread or assistant not found");
    this.scheduleChanged();
    return cron;
  }

  async get(cronId: string, access: Access): Promise<Cron> {
    const { scope } = await access.authorize("crons:read", { cron_id: cronId });
    const cron = await this.storage.crons.get(cronId, scope);
    if (!cron) throw new NotFoundError("Cron not found");
    return cron;
  }

  async update(cronId: string, input: CronPatchInput, access: Access): Promise<Cron> {
    const { scope, value } = await access.authorize("crons:update", {
      cron_id: cronId,
      payload: pickRunBody(input) as JsonObject,
      schedule: input.schedule,
      metadata: input.metadata && { ...input.metadata },
    });
    const patch = value.metadata === undefined ? input : { ...input, metadata: metadataOf(value) };
    const current = await this.storage.crons.get(cronId, scope);
    if (!current) throw new NotFoundError("Cron not found");
    const body = { ...(current.payload as unknown as CronRunBody), ...pickRunBody(patch) };
    const metadata = patch.metadata ? { ...current.metadata, ...patch.metadata } : current.metadata;
    if (patch.metadata) body.metadata = metadata;
    if (RUN_BODY_KEYS.some((key) => patch[key] !== undefined)) {
      // The new body must make a valid run (its input is checked against the graph, its thread and assistant reachable).
      await this.runs.prepare(
        current.thread_id ?? undefined,
        runInput(current.assistant_id, body, current.on_run_completed),
        access,
      );
    }
    const schedule = patch.schedule ?? current.schedule;
    const timezone = patch.timezone === undefined ? current.timezone : patch.timezone;
    const endTime = patch.end_time === undefined ? current.end_time : normalizeTime(patch.end_time);
    const enabled = patch.enabled ?? current.enabled;
    const rescheduled = SCHEDULING_KEYS.some((key) => patch[key] !== undefined) || enabled !== current.enabled;
    const updated = await this.storage.crons.update(
      cronId,
      {
        on_run_completed: current.thread_id === null ? (patch.on_run_completed ?? current.on_run_completed) : null,
        end_time: endTime,
        schedule,
        timezone,
        payload: { ...current.payload, ...body } as JsonObject,
        metadata,
        enabled,
        // A changed schedule (or re-enabling) counts from now: ticks missed meanwhile are not made up. Otherwise the
        // stored value stays, whatever a scheduler made of it since it was read here.
        ...(!enabled
          ? { next_run_date: null }
          : rescheduled || current.next_run_date === null
            ? { next_run_date: nextRunDate(schedule, timezone, new Date(), endTime) }
            : {}),
      },
      scope,
    );
    if (!updated) throw new NotFoundError("Cron not found");
    this.scheduleChanged();
    return updated;
  }

  async delete(cronId: string, access: Access): Promise<void> {
    const { scope } = await access.authorize("crons:delete", { cron_id: cronId });
    if (!(await this.storage.crons.delete(cronId, scope))) throw new NotFoundError("Cron not found");
  }

  async search(query: CronQuery, access: Access): Promise<{ items: Cron[]; total: number }> {
    const { scope } = await access.authorize("crons:search", searchValue(query));
    return this.storage.crons.search({ ...withAssistantId(query), scope });
  }

  async count(filter: CronFilter, access: Access): Promise<number> {
    const { scope } = await access.authorize("crons:search", searchValue(filter));
    return this.storage.crons.count({ ...withAssistantId(filter), scope });
  }
}

/** The run body a cron's tick creates its run from. */
export function runInput(assistantId: string, body: CronRunBody, onCompletion: CronRunCompletion | null): RunCreateInput {
  return {
    ...body,
    assistant_id: assistantId,
    if_not_exists: "reject",
    on_disconnect: "continue",
    on_completion: onCompletion,
  };
}

/** The run body's fields that `input` gives (absent ones left out, so a patch keeps them). */
function pickRunBody(input: Partial<CronRunBody>): Partial<CronRunBody> {
  const body: Partial<CronRunBody> = {};
  for (const key of RUN_BODY_KEYS) if (input[key] !== undefined) Object.assign(body, { [key]: input[key] });
  return body;
}

/** A graph id given as `assistant_id` filters on its system assistant, as crons store the assistant a graph id names. */
function withAssistantId<T extends CronFilter>(filter: T): T {
  const id = filter.assistant_id;
  return id === undefined || isUuid(id) ? filter : { ...filter, assistant_id: systemAssistantId(id) };
}

/** An ISO time as stored (UTC, milliseconds), so stored times compare as text on SQLite. */
function normalizeTime(time: string | null | undefined): string | null {
  return time === null || time === undefined ? null : new Date(time).toISOString();
}

/** The `crons:search` value handlers see (the SDK's CronSearch). */
function searchValue(filter: CronFilter & { limit?: number; offset?: number }) {
  return { assistant_id: filter.assistant_id, thread_id: filter.thread_id, limit: filter.limit, offset: filter.offset };
}
