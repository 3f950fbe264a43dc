import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { nextRunDate, scheduleError } from "../../src/services/cron-schedule.js";

// 2026 in America/New_York: clocks go forward on 8 March at 02:00 (EST → EDT) and back on 1 November at 02:00.
const NY = "America/New_York";

describe("cron schedules in a timezone", () => {
  test("a daily 09:00 follows the wall clock across both daylight-saving changes", () => {
    // Before the change 09:00 is 14:00 UTC; after it, 13:00 UTC.
    assert.equal(nextRunDate("0 9 * * *", NY, new Date("2026-03-07T15:00:00Z"), null), "2026-03-08T13:00:00.000Z");
    assert.equal(nextRunDate("0 9 * * *", NY, new Date("2026-03-06T15:00:00Z"), null), "2026-03-07T14:00:00.000Z");
    assert.equal(nextRunDate("0 9 * * *", NY, new Date("2026-10-31T14:00:00Z"), null), "2026-11-01T14:00:00.000Z");
    assert.equal(nextRunDate("0 9 * * *", NY, new Date("2026-10-30T14:00:00Z"), null), "2026-10-31T13:00:00.000Z");
  });

  test("the same schedule in UTC does not move", () => {
    assert.equal(nextRunDate("0 9 * * *", null, new Date("2026-03-07T15:00:00Z"), null), "2026-03-08T09:00:00.000Z");
  });

  test("a wall-clock time the spring change skips runs an hour later that day, then at its time again", () => {
    const ticks: string[] = [];
    let after = new Date("2026-03-07T12:00:00Z");
    for (let i = 0; i < 3; i++) ticks.push((after = new Date(nextRunDate("30 2 * * *", NY, after, null)!)).toISOString());
    // 02:30 does not exist on 8 March: 03:30 EDT (07:30 UTC); then 02:30 EDT (06:30 UTC).
    assert.deepEqual(ticks, ["2026-03-08T07:30:00.000Z", "2026-03-09T06:30:00.000Z", "2026-03-10T06:30:00.000Z"]);
  });

  test("a fixed time in the hour the autumn change repeats fires once; an hourly schedule fires in both real hours", () => {
    const daily: string[] = [];
    let after = new Date("2026-10-31T12:00:00Z");
    for (let i = 0; i < 2; i++) daily.push((after = new Date(nextRunDate("30 1 * * *", NY, after, null)!)).toISOString());
    // 01:30 happens twice on 1 November (EDT, then EST): one run, at the first.
    assert.deepEqual(daily, ["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
    const hourly: string[] = [];
    after = new Date("2026-11-01T04:00:00Z"); // 00:00 EDT
    for (let i = 0; i < 4; i++) hourly.push((after = new Date(nextRunDate("30 * * * *", NY, after, null)!)).toISOString());
    assert.deepEqual(hourly, [
      "2026-11-01T04:30:00.000Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-01T06:30:00.000Z",
      "2026-11-01T07:30:00.000Z",
    ]);
  });

  test("nothing is scheduled past end_time", () => {
    assert.equal(nextRunDate("0 9 * * *", null, new Date("2026-03-07T15:00:00Z"), "2026-03-08T08:59:59Z"), null);
    assert.equal(
      nextRunDate("0 9 * * *", null, new Date("2026-03-07T15:00:00Z"), "2026-03-08T09:00:00Z"),
      "2026-03-08T09:00:00.000Z",
    );
  });

  test("an expression that is not one is named", () => {
    assert.match(scheduleError("every day") ?? "", /invalid cron expression/);
    assert.equal(scheduleError("*/5 * * * *"), undefined);
    assert.equal(scheduleError("*/10 * * * * *"), undefined, "seconds first");
  });
});
