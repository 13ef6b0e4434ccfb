import { useEffect, useRef, useState, type RefObject } from "react";
import { formatMoney, formatNumber } from "../../lib/format";
import { niceMax, type ChartData, type ChartMetric } from "./chart-data";

const COLORS = ["#4f46e5", "#0891b2", "#16a34a", "#ea580c", "#db2777", "#9333ea", "#ca8a04", "#64748b"];

export function colorFor(index: number): string {
  return COLORS[index % COLORS.length] ?? "#64748b";
}

const DEFAULT_WIDTH = 720;
const MIN_WIDTH = 280;
const HEIGHT = 220;
const PAD = { top: 10, right: 20, bottom: 24, left: 76 };

/** Bottom, middle and top lines; the middle one only where it is a whole number of requests. */
function gridLines(top: number, metric: ChartMetric): number[] {
  return metric === "cost" || Number.isInteger(top / 2) ? [0, 0.5, 1] : [0, 1];
}

/** Axis values keep three significant digits ($0.125, not $0.13): grid steps are finer than cents. */
function axisLabel(value: number, metric: ChartMetric): string {
  return metric === "cost" ? `$${Number(value.toPrecision(3))}` : formatNumber(value);
}

/**
 * The figure's rendered width in CSS pixels. The SVG's coordinate space follows it, so one unit is one pixel and the
 * axis labels keep their 12 px at any width (a fixed 720-unit viewBox drew them 5 px tall at 375 px).
 */
function useRenderedWidth(ref: RefObject<HTMLElement | null>): number {
  const [width, setWidth] = useState(DEFAULT_WIDTH);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const measure = () => {
      const w = Math.round(el.getBoundingClientRect().width);
      if (w > 0) setWidth(Math.max(MIN_WIDTH, w));
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref]);
  return width;
}

/** Stacked bars in plain SVG (a picture with its total); the visually hidden table after it carries the same numbers for screen readers. */
export function UsageChart({ data, metric }: { data: ChartData; metric: ChartMetric }) {
  const format = metric === "cost" ? formatMoney : formatNumber;
  const figure = useRef<HTMLElement>(null);
  const width = useRenderedWidth(figure);
  const top = niceMax(data.max);
  const innerW = width - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const slot = innerW / Math.max(1, data.days.length);
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => PAD.top + innerH - (v / top) * innerH;
  const colorIndex = new Map(data.models.map((m, i) => [m, i]));

  return (
    <figure className="chart" ref={figure}>
      <svg viewBox={`0 0 ${width} ${HEIGHT}`} role="img" aria-label={`${metric === "cost" ? "Spend" : "Requests"} per day for the last ${data.days.length} days, total ${format(data.total)}`}>
        {gridLines(top, metric).map((f) => (
          <g key={f}>
            <line x1={PAD.left} x2={width - PAD.right} y1={y(top * f)} y2={y(top * f)} className="grid" />
            <text x={PAD.left - 6} y={y(top * f) + 4} textAnchor="end" className="axis">{axisLabel(top * f, metric)}</text>
          </g>
        ))}
        {data.days.map((day, i) => {
          const x = PAD.left + i * slot + (slot - barW) / 2;
          let acc = 0;
          return (
            <g key={day.date}>
              <title>{`${day.date} (UTC): ${format(day.total)}${day.segments.map((s) => `\n${s.model}: ${format(s.value)}`).join("")}`}</title>
              {day.segments.map((s) => {
                const y0 = y(acc);
                acc += s.value;
                const y1 = y(acc);
                return <rect key={s.model} x={x} y={y1} width={barW} height={Math.max(0.5, y0 - y1)} fill={colorFor(colorIndex.get(s.model) ?? 0)} />;
              })}
              {(data.days.length - 1 - i) % 7 === 0 ? (
                <text x={x + barW / 2} y={HEIGHT - 6} textAnchor="middle" className="axis">{day.date.slice(5)}</text>
              ) : null}
            </g>
          );
        })}
      </svg>
      {/* The wrapper hides the table: a table given sr-only still grows to its columns and widened the page at phone width. */}
      <div className="sr-only">
        <table>
          <caption>{metric === "cost" ? "Spend" : "Requests"} per day (UTC)</caption>
          <thead>
            <tr><th scope="col">Day</th>{data.models.map((model) => <th key={model} scope="col">{model}</th>)}<th scope="col">Total</th></tr>
          </thead>
          <tbody>
            {data.days.filter((day) => day.total > 0).map((day) => (
              <tr key={day.date}>
                <th scope="row">{day.date}</th>
                {data.models.map((model) => <td key={model}>{format(day.segments.find((s) => s.model === model)?.value ?? 0)}</td>)}
                <td>{format(day.total)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {data.models.length > 0 ? (
        <figcaption className="legend">
          {data.models.map((model, i) => (
            <span key={model} className="legend-item"><span className="swatch" style={{ background: colorFor(i) }} aria-hidden="true" />{model}</span>
          ))}
        </figcaption>
      ) : null}
    </figure>
  );
}
