// Renders bench results as a markdown table with Berth/reference and Berth/floor ratios.

function fmt(value, digits = 1) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (Math.abs(value) >= 100) return value.toFixed(0);
  return value.toFixed(digits);
}

function ratio(a, b) {
  return typeof a === "number" && typeof b === "number" && b !== 0 ? `${fmt(a / b, 2)}×` : "–";
}

export function renderTable(results) {
  const ref = results.servers.reference ?? {};
  const berth = results.servers.berth ?? {};
  const floor = results.floor;
  const pgServer = results.servers.berth_pg;
  const rows = [
    ["`GET /ok` req/s, 32 connections", ref.ok?.per_second, berth.ok?.per_second, null, pgServer?.ok?.per_second],
    [
      "stateless `/runs/wait` c=1 runs/s",
      ref.wait1?.per_second,
      berth.wait1?.per_second,
      floor.invoke.per_second,
      pgServer?.wait1?.per_second,
    ],
    ["stateless `/runs/wait` c=1 p50 ms", ref.wait1?.p50_ms, berth.wait1?.p50_ms, floor.invoke.p50_ms, pgServer?.wait1?.p50_ms],
    ["stateless `/runs/wait` c=1 p99 ms", ref.wait1?.p99_ms, berth.wait1?.p99_ms, floor.invoke.p99_ms, pgServer?.wait1?.p99_ms],
    [
      "stateless `/runs/wait` c=32 runs/s",
      ref.wait32?.per_second,
      berth.wait32?.per_second,
      floor.invoke.per_second,
      pgServer?.wait32?.per_second,
    ],
    ["stateless `/runs/wait` c=32 p50 ms", ref.wait32?.p50_ms, berth.wait32?.p50_ms, null, pgServer?.wait32?.p50_ms],
    ["stateless `/runs/wait` c=32 p99 ms", ref.wait32?.p99_ms, berth.wait32?.p99_ms, null, pgServer?.wait32?.p99_ms],
    [
      "thread create + `/runs/wait` c=32 runs/s",
      ref.threadWait32?.per_second,
      berth.threadWait32?.per_second,
      floor.invoke_checkpointer.per_second,
      pgServer?.threadWait32?.per_second,
    ],
    [
      "thread create + `/runs/wait` c=32 p50 ms",
      ref.threadWait32?.p50_ms,
      berth.threadWait32?.p50_ms,
      floor.invoke_checkpointer.p50_ms,
      pgServer?.threadWait32?.p50_ms,
    ],
    [
      "time to first SSE event p50 ms (40-token graph)",
      ref.stream?.first_event_p50_ms,
      berth.stream?.first_event_p50_ms,
      null,
      pgServer?.stream?.first_event_p50_ms,
    ],
    [
      "time to last token p50 ms (40-token graph)",
      ref.stream?.last_token_p50_ms,
      berth.stream?.last_token_p50_ms,
      null,
      pgServer?.stream?.last_token_p50_ms,
    ],
    ["1,000 concurrent streams: completed", ref.streams?.completed, berth.streams?.completed, null, pgServer?.streams?.completed],
    ["1,000 concurrent streams: seconds", ref.streams?.seconds, berth.streams?.seconds, null, pgServer?.streams?.seconds],
    ["1,000 concurrent streams: server RSS MB", ref.streams?.rss_mb, berth.streams?.rss_mb, null, pgServer?.streams?.rss_mb],
    ["server RSS idle MB", ref.idle_rss_mb, berth.idle_rss_mb, null, pgServer?.idle_rss_mb],
    ["server RSS peak MB", ref.peak_rss_mb, berth.peak_rss_mb, null, pgServer?.peak_rss_mb],
    ["start to first `/ok` s", ref.startup_s, berth.startup_s, null, pgServer?.startup_s],
  ];
  const lines = [
    `Benchmarks (${results.date}, median of ${results.repeats}; floor = the same graph invoked in-process, with a MemorySaver for thread rows)`,
    "",
    `| measure | reference | Berth | Berth/reference | floor | Berth/floor |${pgServer ? " Berth PG+Redis | PG/reference |" : ""}`,
    `|---|---:|---:|---:|---:|---:|${pgServer ? "---:|---:|" : ""}`,
    ...rows.map(([name, r, b, f, p]) => {
      const pg = pgServer ? ` ${fmt(p)} | ${ratio(p, r)} |` : "";
      return `| ${name} | ${fmt(r)} | ${fmt(b)} | ${ratio(b, r)} | ${fmt(f)} | ${f === null ? "–" : ratio(b, f)} |${pg}`;
    }),
  ];
  const overhead = (server) =>
    typeof server.wait1?.p50_ms === "number" ? fmt(server.wait1.p50_ms - floor.invoke.p50_ms, 2) : "–";
  lines.push(
    "",
    `Overhead per stateless run at c=1 (p50 minus the floor's ${fmt(floor.invoke.p50_ms, 2)} ms): reference ${overhead(ref)} ms, Berth ${overhead(berth)} ms.`,
  );
  const scale = results.scale_out;
  if (scale) {
    lines.push(
      "",
      "Scale-out on PostgreSQL + Redis (1 API process; thread create + `/runs/wait` at concurrency 32):",
      "",
      "| worker processes | `cpu` graph (~5 ms of CPU per run) runs/s | p50 ms | `trivial` graph runs/s | p50 ms |",
      "|---:|---:|---:|---:|---:|",
      ...[1, 2].map((n) => {
        const [cpu, trivial] = [scale[`cpu_workers_${n}`], scale[`workers_${n}`]];
        return `| ${n} | ${fmt(cpu?.per_second)} | ${fmt(cpu?.p50_ms)} | ${fmt(trivial?.per_second)} | ${fmt(trivial?.p50_ms)} |`;
      }),
      `| 2 ÷ 1 | ${fmt(scale.cpu_ratio, 2)}× | | ${fmt(scale.ratio, 2)}× | |`,
      "",
      `Fan-out of one run (40-token stream) to ${scale.fan_out?.joiners} joiners: ${scale.fan_out?.complete} received every event ` +
        `(${scale.fan_out?.events_each} each), all done ${fmt(scale.fan_out?.seconds_after_start, 2)} s after the run's start.`,
    );
  }
  for (const [name, server] of Object.entries(results.servers))
    if (server.error) lines.push("", `${name} failed: ${server.error.split("\n")[0]}`);
  return `${lines.join("\n")}\n`;
}
