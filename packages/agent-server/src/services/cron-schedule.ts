import { createRequire } from "node:module";

type CronParser = typeof import("cron-parser").CronExpressionParser;

let loaded: CronParser | undefined;

/** cron-parser, loaded on first use (synchronously: schedules are checked inside request validation): most servers have no crons. */
function cronParser(): CronParser {
  loaded ??= (createRequire(import.meta.url)("cron-parser") as typeof import("cron-parser")).CronExpressionParser;
  return loaded;
}

/**
 * Cron expressions, read by cron-parser: 5 fields (minute hour day-of-month
 * month day-of-week) or 6 with seconds first, and the @hourly/@daily/...
 * nicknames, in an IANA timezone (UTC when none). Daylight-saving days are
 * cron-parser's: a wall-clock time the spring change skips runs an hour
 * later; a fixed time in the hour the autumn change repeats fires once.
 */

/** Why the expression is not one (undefined when it is). */
export function scheduleError(schedule: string): string | undefined {
  if (schedule.trim() === "") return "must be a cron expression";
  try {
    cronParser().parse(schedule, { tz: "UTC" }).next();
    return undefined;
  } catch (error) {
    return `invalid cron expression: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Whether the runtime knows the IANA zone (cron-parser would fail on it only when computing a date). */
export function isTimezone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The first tick strictly after `after`, as ISO text; null when there is
 * none before `endTime` (or none at all).
 */
export function nextRunDate(schedule: string, timezone: string | null, after: Date, endTime: string | null): string | null {
  try {
    const next = cronParser()
      .parse(schedule, { currentDate: after, tz: timezone ?? "UTC" })
      .next()
      .toDate();
    if (endTime !== null && next.getTime() > Date.parse(endTime)) return null;
    return next.toISOString();
  } catch {
    return null; // no further tick (cron-parser gives up searching far ahead)
  }
}
