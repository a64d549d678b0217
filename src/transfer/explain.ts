// `vitals explain CUSTOMER_ID [--version N]` (docs/cli.md, "Explain a score"): why a customer's
// score is what it is, read from a running Vitals with the typed client (GET …/health-score/explanation)
// and printed as a table for a person: each factor's score, effective weight, contribution and
// source, the override when one stands, and what moved it from the version before. Exit status as
// import and export: 0 printed, 1 refused by the server (an unknown customer, version, …), 2 a
// usage mistake.
import type { ExplainedFactor, Explanation, ScoreChange } from '../client/index.ts';
import { connect, run, serverUrl, UsageError } from './commands.ts';

export interface ExplainArgs {
  customerId: string | undefined;
  version: string | undefined;
  url: string | undefined;
  key: string | undefined;
}

/**
 * A version is a 32-bit integer in storage (as the API's own bounds), any of them: a backfill
 * numbers versions below the first, counting down (docs/api.md, "Health scores", History).
 */
const MIN_VERSION = -2_147_483_648;
const MAX_VERSION = 2_147_483_647;
const MINUS = '\u2212';
const ARROW = '\u2192';

export const runExplain = (args: ExplainArgs) =>
  run('explain', serverUrl(args), async () => {
    if (!args.customerId) throw new UsageError('give the id of the customer to explain');
    const version = versionOf(args.version);
    const client = connect(args);
    const explanation = await client.healthScores.explain(args.customerId, { version });
    process.stdout.write(formatExplanation(explanation));
    return 0;
  });

/** `--version N`: a whole number in a version's range; undefined unless given. */
function versionOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < MIN_VERSION || n > MAX_VERSION)
    throw new UsageError(`--version must be a whole number from ${MIN_VERSION} to ${MAX_VERSION}`);
  return n;
}

/** The explanation as lines of text, columns aligned (ends with a newline). */
export function formatExplanation(e: Explanation): string {
  const lines = [
    `${e.customer_id}  version ${e.version} (${e.reason}, ${e.updated_at})`,
    `health score ${num(e.health_score)} ${e.status}  (computed ${num(e.computed_score)})`,
  ];
  if (e.override) {
    const o = e.override;
    lines.push(
      `OVERRIDE ${num(o.health_score)} until ${o.expires_at} by ${o.set_by} — ${JSON.stringify(o.reason)}`,
    );
  }
  lines.push('');
  if (e.factors.length === 0) lines.push('no factors');
  else
    lines.push(...table(['factor', 'score', 'weight', 'contribution', 'source'], e.factors.map(factorRow)));
  lines.push('');
  lines.push(...changeLines(e.change, e.health_score, e.computed_score));
  return `${lines.join('\n')}\n`;
}

function factorRow(f: ExplainedFactor): string[] {
  return [f.factor, num(f.score), num(f.weight), num(f.contribution), source(f)];
}

/** `posted`, or the metric it was derived from: `metric logins sum 30d = 10 (2 points, newest 2026-03-30)`. */
function source(f: ExplainedFactor): string {
  const m = f.metric;
  if (f.source !== 'metric' || !m) return f.source;
  const window = m.window_days === null ? '' : ` ${m.window_days}d`;
  const points = `${m.points} ${m.points === 1 ? 'point' : 'points'}`;
  const newest = m.newest_at === null ? 'none yet' : `newest ${m.newest_at.slice(0, 10)}`;
  return `metric ${m.name} ${m.aggregate}${window} = ${plain(m.value)} (${points}, ${newest})`;
}

function changeLines(change: ScoreChange | null, score: number, computed: number): string[] {
  if (!change) return ['no version before this one'];
  const lines = [
    `since version ${change.from_version}: ${num(change.previous_score)} ${ARROW} ${num(score)} (${signed(change.delta)})`,
  ];
  // Under an override the factors move the computed score, not the one shown: say so.
  if (change.previous_computed_score !== change.previous_score || computed !== score) {
    const before = change.previous_computed_score;
    lines.push(
      computed === before
        ? `  computed score unchanged at ${num(computed)}`
        : `  computed ${num(before)} ${ARROW} ${num(computed)} (${signed(computed - before)})`,
    );
  }
  if (change.factors.length === 0) lines.push('  no factor moved');
  const width = Math.max(0, ...change.factors.map((f) => f.factor.length));
  for (const f of change.factors) {
    lines.push(
      `  ${f.factor.padEnd(width)}  contribution ${num(f.previous_contribution)} ${ARROW} ${num(f.contribution)}  (${signed(f.delta)})`,
    );
  }
  return lines;
}

/** Rows under a header, each column as wide as its widest cell; the last column is not padded. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return [line(header), ...rows.map(line)];
}

const num = (n: number) => n.toFixed(4);

/**
 * A quantity of the account's own (a metric's aggregate: 10 logins, an average of 0.1467…) as the
 * API rounds numbers: at most 6 decimal places, no trailing zeros and no float noise (docs/cli.md).
 */
const plain = (n: number) => String(Math.round(n * 1e6) / 1e6 + 0); // + 0 turns -0 into 0

/** With its sign, the minus a real one: +0.0500, −0.1375, 0.0000. */
function signed(n: number): string {
  const text = Math.abs(n).toFixed(4);
  return n > 0 ? `+${text}` : n < 0 ? `${MINUS}${text}` : text;
}
