import { jsonb } from "@berth/service-kit";
import { toApiRun } from "../run-record.js";
import { RUN_COLUMNS, qualified } from "../shared/columns.js";
import { createdThreadMetadata } from "../shared/created-thread.js";
import type { CreateRunResult, JsonObject, NewRun, RunClaimant, RunThread } from "../types.js";
import type { Queryable } from "./database.js";
import { prepared } from "./prepared.js";
import { fromRow, type RunRow } from "./run-rows.js";

const INSERT_RUN = `SELECT ${RUN_COLUMNS} FROM berth_insert_run($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9, $10, $11::jsonb, $12::jsonb)`;

/**
 * With the claim, the thread's metadata and config as the statement began (the join reads the statement's snapshot,
 * not what the function then wrote): the run executes with them, the insert's own merge of graph_id and assistant_id
 * redone here, instead of reading the thread again. Null when the thread did not exist yet. And whether the thread
 * has a root checkpoint, asked once the insert holds it (berth_thread_checkpointed, migration 015).
 */
const INSERT_RUN_CLAIMED = `SELECT ${qualified("r", RUN_COLUMNS)}, t.metadata AS thread_metadata, t.config AS thread_config,
    berth_thread_checkpointed($2) AS thread_checkpointed
  FROM berth_insert_run($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9, $10, $11::jsonb, $12::jsonb, $13, $14, $15) r
  LEFT JOIN threads t ON t.thread_id = $2`;

type ClaimedRow = RunRow & {
  thread_metadata?: JsonObject | null;
  thread_config?: JsonObject | null;
  thread_checkpointed?: boolean;
};

/**
 * Inserts a run with the multitask check (see RunRepository.create) in one
 * round trip (berth_insert_run, migrations 009 and 013): atomic on its own, or inside
 * the caller's transaction, so that a run's creation and a cron's claim of
 * its tick commit together. It locks the thread row first (or creates it), as
 * every transaction that decides a thread's status does (runs.ts). With
 * `claimFor`, the same statement claims the run for that worker when a claim
 * would take it now: the run is inserted running.
 */
export async function insertRun(client: Queryable, run: NewRun, claimFor?: RunClaimant): Promise<CreateRunResult> {
  const now = Date.now();
  const params: unknown[] = [
    run.run_id,
    run.thread_id,
    run.assistant_id,
    run.graph_id,
    jsonb(run.metadata),
    jsonb(run.kwargs),
    run.multitask_strategy,
    new Date(now).toISOString(),
    run.available_at,
    run.create_thread,
    jsonb(createdThreadMetadata(run)),
    jsonb(run.thread_config ?? {}),
  ];
  const { rows } = claimFor
    ? await prepared<ClaimedRow>(client, "berth_insert_run_claimed", INSERT_RUN_CLAIMED, [
        ...params,
        claimFor.owner,
        now,
        now + claimFor.leaseMs,
      ])
    : await prepared<ClaimedRow>(client, "berth_insert_run", INSERT_RUN, params);
  // No row: no thread. The new run comes last (twice: as inserted, then as claimed, when claimed); without it,
  // the thread was busy and the strategy `reject`.
  if (rows.length === 0) return { kind: "thread_not_found" };
  const claimed = rows.length >= 2 && rows.at(-2)?.run_id === run.run_id ? rows.pop() : undefined;
  const created = rows.at(-1)?.run_id === run.run_id ? rows.pop() : undefined;
  const inflight = rows.map((row) => toApiRun(runOf(row)));
  if (!created) return { kind: "thread_busy" };
  if (!claimed) return { kind: "created", run: toApiRun(runOf(created)), inflight };
  const thread = claimed.thread_metadata ? claimedThread(run, claimed) : undefined;
  return {
    kind: "created",
    run: toApiRun(runOf(created)),
    inflight,
    claimed: runOf(claimed),
    ...(thread ? { thread } : {}),
    threadCheckpointed: claimed.thread_checkpointed === true,
  };
}

const runOf = ({ thread_metadata: _metadata, thread_config: _config, thread_checkpointed: _checkpointed, ...row }: ClaimedRow) =>
  fromRow(row);

/** What a claimed run takes from its thread, as the insert left it. */
function claimedThread(run: NewRun, row: ClaimedRow): RunThread {
  return {
    metadata: { ...row.thread_metadata, graph_id: run.graph_id, assistant_id: run.assistant_id },
    config: row.thread_config ?? {},
  };
}
