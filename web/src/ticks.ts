// Tick values for a chart's count axis. Plain TypeScript (no JSX, no DOM), so the tests import it.

/**
 * About `n` tick values for a count axis from 0 to `max`: 0, step, 2·step, … up to the first
 * multiple of step that is at least `max`. The step is the smallest "nice" whole number (1, 2 or 5
 * times a power of ten) that makes at most `n` intervals, so the ticks are distinct, ascending and
 * whole. A `max` of 0 or less gives [0, 1], so the axis still has a height.
 */
export function ticks(max: number, n = 4): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / Math.max(1, Math.floor(n));
  // Counts: never a step below 1. Math.log10 may be off by one ulp near a power of ten; the
  // candidates go up to 10·pow, so the step found is still the smallest nice one >= raw.
  const pow = raw <= 1 ? 1 : 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw) ?? 10 * pow;
  const intervals = Math.ceil(max / step);
  return Array.from({ length: intervals + 1 }, (_, i) => i * step);
}
