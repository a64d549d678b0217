// Small SVG charts, drawn at the container's pixel width so text stays crisp and unscaled.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Thresholds } from '../../src/domain/scoring.ts';
import type { Status } from './api.ts';
import { axisCount, count, day, STATUS_LABEL, score, seconds, time } from './format.ts';
import {
  breakpoints,
  curve,
  curveDomain,
  plain,
  type Scale,
  scaleScore,
  undrawable,
  valueTicks,
} from './rules.ts';
import { ticks } from './ticks.ts';

function useWidth() {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth);
    const observer = new ResizeObserver(() => setWidth(el.clientWidth));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width] as const;
}

/** Bottom to top: the bands stacked, worst at the bottom where the eye starts. */
export const STACK: readonly Status[] = ['critical', 'at_risk', 'healthy'];

const HEIGHT = 220;
const M = { top: 14, right: 14, bottom: 30, left: 42 };

/** Horizontal gridlines at the count ticks, labelled on the left. */
function CountGridlines({ ticks, w, y }: { ticks: number[]; w: number; y: (c: number) => number }) {
  return (
    <>
      {ticks.map((t) => (
        <g key={t} class="gridlines">
          <line x1={M.left} x2={M.left + w} y1={y(t)} y2={y(t)} />
          <text x={M.left - 6} y={y(t)} dy="0.32em" text-anchor="end">
            {axisCount(t)}
          </text>
        </g>
      ))}
    </>
  );
}

/** The bottom axis with its time labels, the first and last kept inside the chart. */
function TimeAxis({ w, h, labels }: { w: number; h: number; labels: { x: number; text: string }[] }) {
  return (
    <g class="axis">
      <line x1={M.left} x2={M.left + w} y1={M.top + h} y2={M.top + h} />
      {labels.map((l, i) => (
        <text
          key={l.x}
          x={l.x}
          y={HEIGHT - 8}
          text-anchor={i === 0 ? 'start' : i === labels.length - 1 ? 'end' : 'middle'}
        >
          {l.text}
        </text>
      ))}
    </g>
  );
}

export interface Bin {
  from: number;
  to: number;
  total: number;
  counts: Record<Status, number>;
}

/**
 * The server's score distribution (every score, however many): a bar per bin, split by band where
 * the thresholds cut through it, with the thresholds as dashed lines.
 */
export function Histogram({ bins, thresholds }: { bins: Bin[]; thresholds: Thresholds }) {
  const [ref, width] = useWidth();
  const yTicks = ticks(Math.max(1, ...bins.map((b) => b.total)));
  const top = yTicks.at(-1) ?? 1;
  const w = Math.max(0, width - M.left - M.right);
  const h = HEIGHT - M.top - M.bottom;
  const x = (v: number) => M.left + v * w;
  const y = (c: number) => M.top + h - (c / top) * h;
  const total = bins.reduce((n, b) => n + b.total, 0);
  const busiest = bins.reduce<Bin | undefined>((a, b) => (!a || b.total > a.total ? b : a), undefined);
  const label =
    total === 0 || !busiest
      ? 'No health scores yet.'
      : `Histogram of all ${count(total)} health scores in ${bins.length} bins; the most, ${count(busiest.total)}, are between ${busiest.from.toFixed(2)} and ${busiest.to.toFixed(2)}.`;
  return (
    <div class="chart" ref={ref}>
      {width > 0 && (
        <svg class="histogram" width={width} height={HEIGHT} role="img" aria-label={label} data-total={total}>
          <CountGridlines ticks={yTicks} w={w} y={y} />
          {bins.map((b) => {
            let below = 0;
            const width = Math.max(1, (b.to - b.from) * w - 2);
            const title = `${b.from.toFixed(2)}–${b.to.toFixed(2)}: ${count(b.total)} customers`;
            return (
              <g key={b.from}>
                {STACK.filter((s) => b.counts[s] > 0).map((status) => {
                  const y0 = y(below);
                  below += b.counts[status];
                  return (
                    <rect
                      key={status}
                      class={`bar ${status}`}
                      x={x(b.from) + 1}
                      width={width}
                      y={y(below)}
                      height={Math.max(0, y0 - y(below))}
                    >
                      <title>{title}</title>
                    </rect>
                  );
                })}
              </g>
            );
          })}
          {[thresholds.at_risk, thresholds.healthy].map((t) => (
            <line key={t} class="threshold" x1={x(t)} x2={x(t)} y1={M.top} y2={M.top + h} />
          ))}
          <g class="axis">
            <line x1={M.left} x2={M.left + w} y1={M.top + h} y2={M.top + h} />
            {[0, 0.2, 0.4, 0.6, 0.8, 1].map((t) => (
              <text key={t} x={x(t)} y={HEIGHT - 8} text-anchor="middle">
                {t.toFixed(1)}
              </text>
            ))}
          </g>
        </svg>
      )}
    </div>
  );
}

export interface HistoryPoint {
  t: number;
  score: number;
  status: Status;
  version: number;
}

/** A customer's score over time as a step line (a score holds until it changes), one dot per change. */
export function HistoryChart({ points, thresholds }: { points: HistoryPoint[]; thresholds: Thresholds }) {
  const [ref, width] = useWidth();
  const first = points[0];
  const last = points.at(-1);
  if (!first || !last) return <p>No score changes yet.</p>;
  const start = first.t;
  // The line runs on to now: a score holds until it changes.
  const end = Math.max(Date.now(), last.t, start + 1000);
  const w = Math.max(0, width - M.left - M.right);
  const h = HEIGHT - M.top - M.bottom;
  const x = (t: number) => M.left + ((t - start) / (end - start)) * w;
  const y = (v: number) => M.top + h - v * h;
  let d = `M${x(first.t)},${y(first.score)}`;
  for (const p of points.slice(1)) d += `H${x(p.t)}V${y(p.score)}`;
  d += `H${x(end)}`;
  const span = end - start;
  const tick = span < 600_000 ? seconds : span < 86_400_000 ? time : day;
  // As many time labels as fit (about 160 px each): two on a phone, five on a laptop.
  const n = Math.max(2, Math.min(5, Math.floor(w / 160) + 1));
  const xTicks = Array.from({ length: n }, (_, i) => start + (i / (n - 1)) * span);
  const label = `Health score over time: ${count(points.length)} changes from ${day(start)} to ${day(last.t)}; now ${score(last.score)} (${STATUS_LABEL[last.status]}).`;
  return (
    <div class="chart" ref={ref}>
      {width > 0 && (
        <svg
          class="history-chart"
          width={width}
          height={HEIGHT}
          role="img"
          aria-label={label}
          data-points={points.length}
        >
          <rect class="zone healthy" x={M.left} width={w} y={y(1)} height={y(thresholds.healthy) - y(1)} />
          <rect
            class="zone at_risk"
            x={M.left}
            width={w}
            y={y(thresholds.healthy)}
            height={y(thresholds.at_risk) - y(thresholds.healthy)}
          />
          <rect
            class="zone critical"
            x={M.left}
            width={w}
            y={y(thresholds.at_risk)}
            height={y(0) - y(thresholds.at_risk)}
          />
          <g class="gridlines">
            {[0, thresholds.at_risk, thresholds.healthy, 1].map((t) => (
              <text key={t} x={M.left - 6} y={y(t)} dy="0.32em" text-anchor="end">
                {t.toFixed(2)}
              </text>
            ))}
          </g>
          <path class="line" d={d} />
          {points.length <= 400 &&
            points.map((p) => (
              <circle key={p.version} class={`point ${p.status}`} cx={x(p.t)} cy={y(p.score)} r={4}>
                <title>{`Version ${p.version}: ${score(p.score)} (${STATUS_LABEL[p.status]})`}</title>
              </circle>
            ))}
          <TimeAxis w={w} h={h} labels={xTicks.map((t) => ({ x: x(t), text: tick(t) }))} />
        </svg>
      )}
    </div>
  );
}

export interface TrendDay {
  date: string;
  total: number;
  counts: Record<Status, number>;
  average: number | null;
}

/** Customers per band at the end of each day, stacked: the top line is everyone with a score. */
export function TrendChart({ days }: { days: TrendDay[] }) {
  const [ref, width] = useWidth();
  const first = days[0];
  const last = days.at(-1);
  if (!first || !last) return null;
  const yTicks = ticks(Math.max(1, ...days.map((d) => d.total)));
  const top = yTicks.at(-1) ?? 1;
  const w = Math.max(0, width - M.left - M.right);
  const h = HEIGHT - M.top - M.bottom;
  const x = (i: number) => M.left + (days.length === 1 ? w / 2 : (i / (days.length - 1)) * w);
  const y = (c: number) => M.top + h - (c / top) * h;
  // Each band's area lies between the sum of the bands below it and that sum plus its own count.
  const areas = STACK.map((status, k) => {
    const below = (d: TrendDay) => STACK.slice(0, k).reduce((a, s) => a + d.counts[s], 0);
    const upper = days.map((d, i) => `${x(i)},${y(below(d) + d.counts[status])}`);
    const lower = days.map((d, i) => `${x(i)},${y(below(d))}`).reverse();
    return { status, d: `M${upper.join('L')}L${lower.join('L')}Z` };
  });
  const n = Math.max(2, Math.min(5, Math.floor(w / 140) + 1));
  const xTicks = [
    ...new Set(Array.from({ length: n }, (_, i) => Math.round((i / (n - 1)) * (days.length - 1)))),
  ];
  const change = (s: Status) => `${STATUS_LABEL[s]} ${count(first.counts[s])} → ${count(last.counts[s])}`;
  const label = `Customers per status band at the end of each day, ${first.date} to ${last.date}: ${STACK.map(change).join(', ')}.`;
  return (
    <div class="chart" ref={ref}>
      {width > 0 && (
        <svg
          class="trend-chart"
          width={width}
          height={HEIGHT}
          role="img"
          aria-label={label}
          data-days={days.length}
        >
          <CountGridlines ticks={yTicks} w={w} y={y} />
          {areas.map((a) => (
            <path key={a.status} class={`area ${a.status}`} d={a.d}>
              <title>{STATUS_LABEL[a.status]}</title>
            </path>
          ))}
          <TimeAxis
            w={w}
            h={h}
            labels={xTicks.map((i) => ({ x: x(i), text: days[i]?.date.slice(5) ?? '' }))}
          />
        </svg>
      )}
    </div>
  );
}

const SCALE_HEIGHT = 180;
const valueLabel = new Intl.NumberFormat(undefined, { notation: 'compact', maximumSignificantDigits: 4 });

/**
 * A factor rule's scale as a curve: the metric's value across, the factor's score (0 to 1) up. A
 * linear scale is a ramp, flat at 0 and 1 beyond its ends, with from and to marked; steps are a
 * staircase, each step's start marked. Drawn from what the form holds, as it is typed.
 */
export function ScaleChart({ scale, metric }: { scale: Scale; metric: string }) {
  const [ref, width] = useWidth();
  const why = undrawable(scale);
  // The container stays while the scale cannot be drawn, so its width is known when it can.
  if (why)
    return (
      <div class="chart scale-chart" ref={ref}>
        <p class="curve-note">{why}</p>
      </div>
    );
  const [lo, hi] = curveDomain(scale);
  const m = { ...M, top: 18 };
  const w = Math.max(0, width - m.left - m.right);
  const h = SCALE_HEIGHT - m.top - m.bottom;
  const x = (v: number) => m.left + ((v - lo) / (hi - lo)) * w;
  const y = (s: number) => m.top + h - s * h;
  const corners = curve(scale, lo, hi);
  const d = corners.map(([v, s], i) => `${i === 0 ? 'M' : 'L'}${x(v)},${y(s)}`).join('');
  const xTicks = valueTicks(lo, hi, Math.max(2, Math.min(6, Math.floor(w / 70))));
  const name = metric || 'the metric';
  const label =
    scale.type === 'linear'
      ? `The factor's score by the value of ${name}: 0 at ${plain(scale.from)}, 1 at ${plain(scale.to)}, in proportion between, and no lower than 0 or higher than 1 beyond.`
      : `The factor's score by the value of ${name}: 0 below ${plain(breakpoints(scale)[0] ?? 0)}; ${scale.steps.map((s) => `${plain(s.score)} from ${plain(s.min)}`).join('; ')}.`;
  // A linear scale's ends are labelled on the side away from the ramp: "from" below it, "to" above.
  const rising = scale.type === 'linear' && scale.to > scale.from;
  return (
    <div class="chart scale-chart" ref={ref}>
      {width > 0 && (
        <svg
          class="curve-chart"
          width={width}
          height={SCALE_HEIGHT}
          role="img"
          aria-label={label}
          data-scale={scale.type}
          data-corners={corners.length}
        >
          <g class="gridlines">
            {[0, 0.5, 1].map((t) => (
              <g key={t}>
                <line x1={m.left} x2={m.left + w} y1={y(t)} y2={y(t)} />
                <text x={m.left - 6} y={y(t)} dy="0.32em" text-anchor="end">
                  {t === 0.5 ? '0.5' : String(t)}
                </text>
              </g>
            ))}
          </g>
          <g class="axis">
            <line x1={m.left} x2={m.left + w} y1={m.top + h} y2={m.top + h} />
            {xTicks.map((t) => (
              <text key={t} x={x(t)} y={SCALE_HEIGHT - 8} text-anchor="middle">
                {valueLabel.format(t)}
              </text>
            ))}
          </g>
          {scale.type === 'linear' &&
            (['from', 'to'] as const).map((end) => {
              const v = scale[end];
              const s = end === 'from' ? 0 : 1;
              const left = (end === 'from') === rising;
              return (
                <g key={end} class="scale-end">
                  <line class="guide" x1={x(v)} x2={x(v)} y1={m.top} y2={m.top + h} />
                  <circle class="marker" cx={x(v)} cy={y(s)} r={4} />
                  <text
                    x={x(v) + (left ? -6 : 6)}
                    y={y(s) + (s === 0 ? -8 : 16)}
                    text-anchor={left ? 'end' : 'start'}
                  >
                    {`${end} ${valueLabel.format(v)}`}
                  </text>
                </g>
              );
            })}
          <path class="line" d={d} />
          {scale.type === 'steps' &&
            breakpoints(scale).map((v, _, all) => (
              <g key={v}>
                <circle class="marker" cx={x(v)} cy={y(scaleScore(scale, v))} r={4}>
                  <title>{`${plain(v)} and above: ${plain(scaleScore(scale, v))}`}</title>
                </circle>
                {/* Each step's score beside it, while they have room (the title says it anyway). */}
                {all.length <= 8 && w / all.length >= 40 && (
                  <text class="step-score" x={x(v) + 6} y={y(scaleScore(scale, v)) - 6}>
                    {plain(scaleScore(scale, v))}
                  </text>
                )}
              </g>
            ))}
        </svg>
      )}
    </div>
  );
}

export interface SparkPoint {
  t: number;
  value: number;
}

const SPARK = { width: 200, height: 44, pad: 4 };

/**
 * A metric's recent points, oldest on the left, up to now: a line through them with a dot each,
 * and the part of the time inside the rule's window shaded. No axes: the text beside it says the numbers.
 */
export function Sparkline({
  points,
  windowDays,
  label,
}: {
  points: SparkPoint[];
  windowDays: number | null;
  label: string;
}) {
  const first = points[0];
  if (!first) return null;
  const now = Math.max(Date.now(), points.at(-1)?.t ?? 0);
  const start = Math.min(first.t, windowDays === null ? first.t : now - windowDays * 86_400_000);
  const end = Math.max(now, start + 1000);
  const values = points.map((p) => p.value);
  const low = Math.min(...values);
  const high = Math.max(...values);
  const { width, height, pad } = SPARK;
  const x = (t: number) => pad + ((t - start) / (end - start)) * (width - 2 * pad);
  const y = (v: number) =>
    high === low ? height / 2 : pad + (1 - (v - low) / (high - low)) * (height - 2 * pad);
  const d = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.t)},${y(p.value)}`).join('');
  const from = windowDays === null ? null : Math.max(start, now - windowDays * 86_400_000);
  return (
    <svg
      class="sparkline"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={label}
      data-points={points.length}
    >
      {from !== null && <rect class="window" x={x(from)} y={0} width={x(end) - x(from)} height={height} />}
      <path class="line" d={d} />
      {points.length <= 100 &&
        points.map((p) => (
          <circle key={p.t} class="dot" cx={x(p.t)} cy={y(p.value)} r={2.5}>
            <title>{`${day(p.t)}: ${plain(p.value)}`}</title>
          </circle>
        ))}
    </svg>
  );
}
