// A leaf (types.ts imports it and holds CronRepository), so there is no import cycle.
import type { JsonObject } from "./json.js";

/** What becomes of a stateless cron run's thread once the run ended. */
export type CronRunCompletion = "delete" | "keep";

/** A scheduled run, with the API's key order. */
export interface Cron {
  cron_id: string;
  assistant_id: string;
  /** The thread every run goes to; null: stateless, a new thread per run. */
  thread_id: string | null;
  /** Stateless crons only (null on a thread cron). */
  on_run_completed: CronRunCompletion | null;
  /** ISO; no run starts after it. */
  end_time: string | null;
  schedule: string;
  /** IANA zone the schedule is read in; null: UTC. */
  timezone: string | null;
  created_at: string;
  updated_at: string;
  /** The body of the runs it creates (assistant_id, input, config, ...). */
  payload: JsonObject;
  user_id: string | null;
  /** ISO; null while nothing is scheduled (disabled, or past end_time). */
  next_run_date: string | null;
  metadata: JsonObject;
  enabled: boolean;
}

export interface NewCron {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  on_run_completed: CronRunCompletion | null;
  end_time: string | null;
  schedule: string;
  timezone: string | null;
  payload: JsonObject;
  user_id: string | null;
  next_run_date: string | null;
  metadata: JsonObject;
  enabled: boolean;
}

/**
 * The fields a PATCH replaces: the caller computes the whole new cron.
 * `next_run_date` absent: left as stored, which a scheduler may be moving
 * meanwhile (writing back the value read would replay a tick).
 */
export type CronUpdate = Pick<
  Cron,
  "on_run_completed" | "end_time" | "schedule" | "timezone" | "payload" | "metadata" | "enabled"
> & {
  next_run_date?: string | null;
};

export interface CronFilter {
  /** An authorization scope (storage/types.ts `MetadataScope`): the cron's metadata must contain it. */
  scope?: JsonObject;
  assistant_id?: string;
  thread_id?: string;
  enabled?: boolean;
  /** JSON containment. */
  metadata?: JsonObject;
}

export type CronSortBy = "cron_id" | "assistant_id" | "thread_id" | "created_at" | "updated_at" | "next_run_date";

export interface CronQuery extends CronFilter {
  limit: number;
  offset: number;
  sort_by: CronSortBy;
  sort_order: "asc" | "desc";
}

/** One tick of a cron to claim: the `next_run_date` read as due, and the one that replaces it. */
export interface CronTick {
  cron_id: string;
  due: string;
  next: string | null;
}
