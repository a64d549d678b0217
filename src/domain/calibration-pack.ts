// The judged outcomes as a calibration thread receives them (docs/operations.md, "The calibration threads"):
// typed arrays whose buffers are transferred, not copied, so the main thread spends no time
// cloning an object per outcome and the thread rebuilds exactly what calibrate() reads. Pure.
import type { Judged, Outcome } from './calibration.ts';
import type { Factors } from './scoring.ts';

/** One page of outcomes: `rows` of `width` factor columns each, NaN where a factor is missing. */
export interface PackedPage {
  rows: number;
  width: number;
  churned: Uint8Array;
  scores: Float64Array;
  values: Float64Array;
}

export interface PackedJudged {
  /** Factor names by column, in the order they first appear. */
  names: string[];
  pages: PackedPage[];
}

/** An outcome as the store reads it: score and factors null when its customer had no version then. */
export interface ReadOutcome {
  outcome: Outcome;
  score: number | null;
  factors: Factors | null;
}

export class JudgedPacker {
  readonly #names: string[] = [];
  readonly #columns = new Map<string, number>();
  readonly #pages: PackedPage[] = [];
  /** Outcomes without a score then (not judged). */
  unscored = 0;
  judged = 0;
  /** Factor values packed, over every outcome. */
  cells = 0;

  /** A page of read outcomes; the unscored ones are counted, not packed. */
  add(outcomes: readonly ReadOutcome[]): void {
    let rows = 0;
    for (const o of outcomes) if (o.score !== null) rows++;
    this.unscored += outcomes.length - rows;
    if (rows === 0) return;
    let width = this.#names.length;
    let values = new Float64Array(rows * width).fill(Number.NaN);
    const churned = new Uint8Array(rows);
    const scores = new Float64Array(rows);
    let r = 0;
    const at: number[] = [];
    for (const o of outcomes) {
      if (o.score === null) continue;
      churned[r] = o.outcome === 'churned' ? 1 : 0;
      scores[r] = o.score;
      const factors = o.factors ?? {};
      const keys = Object.keys(factors);
      at.length = 0;
      for (const name of keys) {
        let c = this.#columns.get(name);
        if (c === undefined) {
          c = this.#names.length;
          this.#names.push(name);
          this.#columns.set(name, c);
        }
        at.push(c);
      }
      if (this.#names.length > width) {
        // Factors no earlier outcome had: this page widens (once per outcome that brings any).
        const next = this.#names.length;
        const wider = new Float64Array(rows * next).fill(Number.NaN);
        for (let i = 0; i < r; i++) wider.set(values.subarray(i * width, (i + 1) * width), i * next);
        width = next;
        values = wider;
      }
      const base = r * width;
      this.cells += keys.length;
      for (let k = 0; k < keys.length; k++)
        values[base + (at[k] as number)] = factors[keys[k] as string] as number;
      r++;
    }
    this.judged += rows;
    this.#pages.push({ rows, width, churned, scores, values });
  }

  /** What was added, and the buffers to transfer with it. */
  packed(): { judged: PackedJudged; transfer: ArrayBuffer[] } {
    const transfer: ArrayBuffer[] = [];
    for (const p of this.#pages)
      transfer.push(
        p.churned.buffer as ArrayBuffer,
        p.scores.buffer as ArrayBuffer,
        p.values.buffer as ArrayBuffer,
      );
    return { judged: { names: [...this.#names], pages: this.#pages }, transfer };
  }
}

/**
 * The outcomes as calibrate() takes them, in the order they were added. Each outcome's factors
 * are a plain object with its factors in column order: calibrate's answer depends on none of
 * the key orders (computeScore sorts the names, the factors' report is sorted by a total order).
 */
export function unpackJudged(packed: PackedJudged): Judged[] {
  const judged: Judged[] = [];
  const names = packed.names;
  for (const p of packed.pages) {
    for (let r = 0; r < p.rows; r++) {
      const factors: Factors = {};
      const base = r * p.width;
      for (let c = 0; c < p.width; c++) {
        const v = p.values[base + c] as number;
        if (!Number.isNaN(v)) factors[names[c] as string] = v;
      }
      judged.push({ churned: p.churned[r] === 1, score: p.scores[r] as number, factors });
    }
  }
  return judged;
}
