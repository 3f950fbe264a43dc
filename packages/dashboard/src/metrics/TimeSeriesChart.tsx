import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface Series {
  label: string;
  values: (number | null)[];
}

interface TimeSeriesChartProps {
  title: string;
  /** The y axis's unit, as its label: "runs / min", "ms", "%". */
  unit: string;
  /** Seconds since the epoch, oldest first; one per value of each series. */
  time: number[];
  series: Series[];
  /** A value as the legend and the summary write it. */
  format?: (value: number) => string;
  /** The lowest top of the y axis (a flat zero line keeps a visible scale). */
  minTop?: number;
  testId?: string;
}

/** Colours told apart in print and by most colour-blind readers (the legend also names each series). */
const COLORS = ["#0b57d0", "#b42318", "#1a7f37", "#9a6700", "#6e40c9", "#0e7490", "#c2410c", "#57606a"];
const HEIGHT = 200;

/**
 * Where uPlot draws no dots (a dense series), the values with no neighbour still get one: a line needs two points,
 * and a run seen in one step alone would not show at all.
 */
function isolatedPoints(self: uPlot, seriesIndex: number, show: boolean): number[] | null {
  if (show) return null;
  const values = self.data[seriesIndex] ?? [];
  const isolated: number[] = [];
  values.forEach((value, index) => {
    if (value !== null && value !== undefined && values[index - 1] == null && values[index + 1] == null) isolated.push(index);
  });
  return isolated.length > 0 ? isolated : null;
}

const latestOf = (values: ArrayLike<number | null | undefined>): number | null | undefined =>
  Array.from(values)
    .reverse()
    .find((value) => value !== null && value !== undefined);

const hasData = (series: Series[]) => series.some((one) => one.values.some((value) => value !== null));

/** The series' latest values as words: what a screen reader gets instead of the canvas. */
function describe(series: Series[], format: (value: number) => string): string {
  return series
    .map((one) => {
      const latest = latestOf(one.values);
      return `${one.label}: ${latest === undefined || latest === null ? "no data" : `latest ${format(latest)}`}`;
    })
    .join("; ");
}

/**
 * A line chart of time series, drawn by uPlot on a canvas (its styles come from its CSS file, bundled with the page;
 * it sets every other style through the DOM, as the page's policy wants). Nulls are gaps.
 */
export function TimeSeriesChart({ title, unit, time, series, format = String, minTop = 1, testId }: TimeSeriesChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const labels = series.map((one) => one.label).join("\n");
  const formatRef = useRef(format);
  formatRef.current = format;

  // A new chart when the series change (a replica came or went); new data otherwise.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `labels` stands for the series' names and count
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 200),
      height: HEIGHT,
      scales: { x: { time: true }, y: { range: (_self, _min, max) => [0, Math.max(max ?? 0, minTop) * 1.1] } },
      axes: [
        { label: "Time", labelSize: 20 },
        { label: unit, labelSize: 20, size: 72, values: (_self, ticks) => ticks.map((tick) => formatRef.current(tick)) },
      ],
      series: [
        {
          label: "Time",
          value: (_self: uPlot, value: number | null, _seriesIndex: number, index: number | null) =>
            index === null || value === null
              ? "latest"
              : new Date(value * 1000).toLocaleString(undefined, { dateStyle: "short", timeStyle: "short" }),
        },
        ...series.map((one, index) => ({
          label: one.label,
          stroke: COLORS[index % COLORS.length],
          width: 2,
          points: { size: 6, fill: COLORS[index % COLORS.length], filter: isolatedPoints },
          // Off the chart the legend gives each series' latest value; under the cursor, the value there.
          value: (self: uPlot, value: number | null, seriesIndex: number, index: number | null) => {
            const shown = index === null ? latestOf(self.data[seriesIndex] ?? []) : value;
            return shown === null || shown === undefined ? "—" : formatRef.current(shown);
          },
        })),
      ],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
    };
    const made = new uPlot(options, [time, ...series.map((one) => one.values)] as uPlot.AlignedData, element);
    chart.current = made;
    const resize = new ResizeObserver(() => made.setSize({ width: Math.max(element.clientWidth, 200), height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      made.destroy();
      chart.current = null;
    };
  }, [labels, unit, minTop]);

  useEffect(() => {
    chart.current?.setData([time, ...series.map((one) => one.values)] as uPlot.AlignedData);
  }, [time, series]);

  const empty = !hasData(series);
  const points = series.reduce((count, one) => count + one.values.filter((value) => value !== null).length, 0);
  return (
    <figure className="chart" data-testid={testId} data-points={points}>
      <figcaption>
        <strong>{title}</strong> <span className="hint">({unit})</span>
      </figcaption>
      <div ref={box} role="img" aria-label={`${title}, ${unit}. ${describe(series, format)}`} />
      {empty && <p className="chart-empty">No data in this window</p>}
    </figure>
  );
}
