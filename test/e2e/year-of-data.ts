// A year of an account's data as a new user brings it on day one (issue 52): 40 customers, a metric
// row a day each (logins, seats) up to today, and one renewal outcome each, as the CSV files
// `vitals import` reads. Deterministic but for `now`.
//   - 10 churners: healthy, then 200 days of falling logins and seats up to their churn, no point
//     after it (one of them, acct_39, churns while healthy: no ranking is perfect);
//   - 4 movers (MOVERS): renewed, then logins falling over the last 20 days and seats cut today;
//   - the rest renewed at steady levels, from 0.7 to 2.2 logins a day (the lowest at risk).
import { DAY_MS } from '../../src/domain/portfolio.ts';

export const CUSTOMERS = 40;
export const DAYS = 365;
export const MOVERS = ['acct_01', 'acct_06', 'acct_10', 'acct_14'];
/** The movers' seats after today's cut (from 20). */
const CUT_SEATS = 8;

/** The rules and weights the data is read by: a 14-day sum of logins, and the last seat count. */
export const RULES = {
  engagement: {
    metric: 'logins',
    aggregate: 'sum',
    window_days: 14,
    scale: { type: 'linear', from: 0, to: 28 },
  },
  adoption: {
    metric: 'seats',
    aggregate: 'last',
    max_age_days: 30,
    scale: { type: 'linear', from: 0, to: 20 },
  },
};
export const WEIGHTS = { engagement: 0.7, adoption: 0.3 };

const NAMES = [
  'Acme',
  'Globex',
  'Initech',
  'Umbrella',
  'Hooli',
  'Stark',
  'Wayne',
  'Wonka',
  'Cyberdyne',
  'Tyrell',
];
const SUFFIXES = ['Inc.', 'Labs', 'Group', 'Systems'];

const id = (i: number) => `acct_${String(i).padStart(2, '0')}`;
/** A number in [0, 1) that differs from day to day and customer to customer. */
const jitter = (i: number, d: number) => ((((i + 3) * 7919 + d * 104_729) % 1009) + 0.5) / 1009;

interface Shape {
  /** Logins a day and seats, `d` days before today; null: no point (after a churn). */
  at(d: number): { logins: number; seats: number } | null;
  outcome: { kind: 'churned' | 'retained'; daysAgo: number };
}

function shape(i: number): Shape {
  const base = [2.2, 1.8, 1.4, 1.0, 0.7][i % 5] as number;
  const seats = 10 + ((i * 7) % 15);
  const renewed = 30 + ((i * 37) % 220);
  if (i % 4 === 3) {
    const churn = 25 + 22 * ((i - 3) / 4);
    const falls = i !== 39;
    return {
      at: (d) => {
        if (d < churn) return null;
        const left = falls ? Math.min(1, (d - churn) / 200) : 1;
        return { logins: 0.1 + 2.1 * left ** 1.5, seats: Math.round(5 + 15 * left) };
      },
      outcome: { kind: 'churned', daysAgo: churn },
    };
  }
  if (MOVERS.includes(id(i))) {
    return {
      at: (d) => ({ logins: d > 20 ? 2 : 0.5 + (1.5 * d) / 20, seats: 20 }),
      outcome: { kind: 'retained', daysAgo: renewed },
    };
  }
  return { at: () => ({ logins: base, seats }), outcome: { kind: 'retained', daysAgo: renewed } };
}

/** The three files' text. */
export function yearOfData(now: number): { customers: string; metrics: string; outcomes: string } {
  const today = Math.floor(now / DAY_MS);
  const customers = ['customer_id,name,email,arr,lifecycle'];
  const outcomes = ['customer_id,outcome,at,note'];
  const shapes = Array.from({ length: CUSTOMERS }, (_, i) => shape(i));
  shapes.forEach((s, i) => {
    const name = `${NAMES[i % NAMES.length]} ${SUFFIXES[Math.floor(i / NAMES.length)]}`;
    const churned = s.outcome.kind === 'churned';
    const arr = 6000 + ((i * 7919) % 40) * 1500;
    customers.push(`${id(i)},${name},ops@${id(i)}.example,${arr},${churned ? 'churned' : 'active'}`);
    const at = new Date((today - s.outcome.daysAgo) * DAY_MS + DAY_MS / 2).toISOString();
    outcomes.push(`${id(i)},${s.outcome.kind},${at},${churned ? 'left at renewal' : 'renewed'}`);
  });
  // Oldest day first, as an export of a year would be. A day's row is dated at its noon, today's
  // only once noon has passed (so a 14-day window always holds 14 of them); the movers' seat cut a
  // minute ago, its logins cell empty (no point).
  const metrics = ['customer_id,at,logins,seats'];
  for (let d = DAYS; d >= 0; d--) {
    const at = (today - d) * DAY_MS + DAY_MS / 2;
    if (at > now - 60_000) continue;
    const weekend = [0, 6].includes(new Date(at).getUTCDay());
    shapes.forEach((s, i) => {
      const p = s.at(d);
      if (!p) return;
      const logins = Math.round(p.logins * (weekend ? 0.4 : 1) * (0.5 + jitter(i, d)) * 1.1);
      metrics.push(`${id(i)},${new Date(at).toISOString()},${logins},${p.seats}`);
    });
  }
  const cut = new Date(Math.max(today * DAY_MS, now - 60_000)).toISOString();
  for (const mover of MOVERS) metrics.push(`${mover},${cut},,${CUT_SEATS}`);
  return {
    customers: `${customers.join('\n')}\n`,
    metrics: `${metrics.join('\n')}\n`,
    outcomes: `${outcomes.join('\n')}\n`,
  };
}
