import type { Status } from './api.ts';

export const STATUS_LABEL: Record<Status, string> = {
  healthy: 'Healthy',
  at_risk: 'At risk',
  critical: 'Critical',
};

export const score = (n: number) => n.toFixed(3);

const number = new Intl.NumberFormat();
export const count = (n: number) => number.format(n);

const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
/** A count for a chart axis, short enough for its margin at any size: 950, 1.5K, 100K, 2.5M. */
export const axisCount = (n: number) => compact.format(n);

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const shortDate = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
const shortTime = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const longTime = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

const utcDay = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
/** A UTC day as the API writes it (YYYY-MM-DD), for a person: Nov 25, 2026. */
export const utcDate = (ymd: string) => utcDay.format(new Date(`${ymd}T00:00:00Z`));

export const when = (iso: string | number) => dateTime.format(new Date(iso));
export const day = (t: number) => shortDate.format(new Date(t));
export const time = (t: number) => shortTime.format(new Date(t));
export const seconds = (t: number) => longTime.format(new Date(t));

export const REASON_LABEL: Record<string, string> = {
  factors_updated: 'factors updated',
  weights_changed: 'weights changed',
  thresholds_changed: 'thresholds changed',
  metrics_updated: 'metrics updated',
  rules_changed: 'factor rules changed',
  time_passed: 'time passed',
  override_set: 'override set',
  override_removed: 'override removed',
  override_expired: 'override ended',
  backfill: 'backfilled',
};

/** A change of a score or contribution, its sign always written: +0.200, −0.140 (a minus sign), ±0.000. */
export const signed = (n: number) => {
  // Halves round up, as toFixed rounds the exact contributions (0.1875 → 0.188): 0.188 − 0.150 reads −0.038.
  const text = (Math.round(Math.abs(n) * 1000) / 1000).toFixed(3);
  if (text === '0.000') return '±0.000';
  return `${n < 0 ? '−' : '+'}${text}`;
};

const mediumDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
/** A date for a person: Apr 30, 2026. */
export const date = (iso: string | number) => mediumDate.format(new Date(iso));

const amount = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
const compactAmount = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
/** An amount of ARR, in the account's own currency (Vitals keeps no currency): 120,000.5. */
export const money = (n: number) => amount.format(n);
/** An amount of ARR for a card or a narrow column: 1.2M. */
export const shortMoney = (n: number) => compactAmount.format(n);
