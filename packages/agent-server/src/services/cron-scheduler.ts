import { UNRESTRICTED } from "./authorization.js";
import { randomUUID } from "node:crypto";
import { NotFoundError, UnprocessableError } from "@berth/service-kit";
import type { Logger } from "../logger.js";
import type { Cron } from "../storage/cron-types.js";
import type { NewRun, Storage } from "../storage/types.js";
import { nextRunDate } from "./cron-schedule.js";
import { type CronRunBody, runInput } from "./crons.js";
import type { RunService } from "./runs.js";

/** Due crons handled per pass; more wait for the next one. */
const BATCH = 100;

export interface CronScheduler {
  /** Looks again now: a cron of this process was created or changed (another process's are seen within `pollMs`). */
  wake(): void;
  /** Stops polling and waits for the pass under way. */
  stop(): Promise<void>;
}

/** Waking a little after a tick is due, not before it: timers may fire a millisecond early. */
const WAKE_SLACK_MS = 2;

/**
 * Fires due crons every `pollMs`, in every process that executes runs. A tick
 * is claimed in the database with its run (CronRepository.fire), so any
 * number of processes create exactly one run per tick. A due cron fires once
 * however many of its ticks passed (processes all down, a late poll), and its
 * next run is the first tick after that moment: missed ticks are not replayed.
 * It sleeps until the earliest scheduled tick, or `pollMs` at most (crons
 * other processes create or change), so ticks fire close to their time.
 */
export interface CronSchedulerDeps {
  storage: Storage;
  runs: RunService;
  logger: Logger;
  pollMs: number;
}

export function startCronScheduler({ storage, runs, logger, pollMs }: CronSchedulerDeps): CronScheduler {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> | undefined;

  const fireDue = async () => {
    const due = await storage.crons.due(new Date().toISOString(), BATCH);
    for (const cron of due) {
      if (stopped) return;
      await fire(cron).catch((err) =>
        logger.warn({ err, cron_id: cron.cron_id }, "firing a cron failed (retried at the next poll)"),
      );
    }
  };

  const fire = async (cron: Cron) => {
    const due = cron.next_run_date;
    if (due === null) return;
    const now = new Date();
    const ended = cron.end_time !== null && now.getTime() > Date.parse(cron.end_time);
    // Past its end_time, the cron's pending tick is consumed without a run: nothing is scheduled any more.
    const next = ended ? null : nextRunDate(cron.schedule, cron.timezone, now, cron.end_time);
    const run = ended ? undefined : await prepare(cron, due);
    const result = await storage.crons.fire({ cron_id: cron.cron_id, due, next }, run);
    if (result.kind === "taken" || !result.run || !run) return;
    const log = logger.child({ cron_id: cron.cron_id, run_id: run.run_id, thread_id: run.thread_id });
    if (result.run.kind === "created") {
      await runs.created(run, result.run.inflight);
      log.info({ next_run_date: next }, "cron run created");
    } else {
      log.warn({ reason: result.run.kind }, "cron tick skipped: its thread is busy (multitask_strategy reject) or gone");
    }
  };

  /** The tick's run; undefined (the tick consumed without a run) when the cron's body no longer makes one. */
  const prepare = async (cron: Cron, due: string): Promise<NewRun | undefined> => {
    const body = cron.payload as unknown as CronRunBody;
    const input = runInput(cron.assistant_id, body, cron.on_run_completed);
    // Runs carry the cron and the tick they were created for (one run per tick: the tick says which).
    input.metadata = { ...cron.metadata, cron_id: cron.cron_id, cron_run_date: due };
    const stateless = cron.thread_id === null;
    try {
      return await runs.prepare(
        cron.thread_id ?? undefined,
        input,
        UNRESTRICTED,
        randomUUID(),
        // A stateless cron's threads carry its metadata (so its owner's, when a handler stamped one).
        stateless ? { ...cron.metadata, cron_id: cron.cron_id } : undefined,
      );
    } catch (error) {
      if (!(error instanceof NotFoundError || error instanceof UnprocessableError)) throw error;
      logger.warn({ cron_id: cron.cron_id, err: error }, "cron tick skipped: its run cannot be created");
      return undefined;
    }
  };

  let woken = false;
  const run = () => {
    clearTimeout(timer);
    pass = fireDue()
      .then(() => storage.crons.nextDueAt())
      .catch((err) => {
        logger.warn({ err }, "looking for due crons failed (retried at the next poll)");
        return null;
      })
      .then((nextDueAt) => {
        pass = undefined;
        if (stopped) return;
        if (woken) {
          woken = false;
          return run();
        }
        sleep(nextDueAt === null ? pollMs : Math.min(pollMs, Math.max(0, nextDueAt - Date.now()) + WAKE_SLACK_MS));
      });
  };
  const sleep = (ms: number) => {
    timer = setTimeout(run, ms);
    timer.unref();
  };
  sleep(0);

  return {
    wake() {
      if (stopped) return;
      if (pass) woken = true;
      else run();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await pass;
    },
  };
}
