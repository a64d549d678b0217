// What the portfolio shows, kept in its URL (docs/dashboard.md, "Portfolio"): every filter and the
// sort is a query parameter, so a view is bookmarkable, Back goes to the last one, and a saved view
// (docs/api.md, "Saved views") is this query string. The filters are the API's own parameters
// (docs/api.md, "Filters"); the renewal window is kept as days ahead (`renewal=90`), so that a
// bookmark stays "the next 90 days" tomorrow, and becomes the API's range when a request is made.
import type { Segment, Status } from './api.ts';

export const SHOWS = {
  attention: { label: 'Needs attention (critical, then at risk)', statuses: ['critical', 'at_risk'] },
  critical: { label: 'Critical', statuses: ['critical'] },
  at_risk: { label: 'At risk', statuses: ['at_risk'] },
  healthy: { label: 'Healthy', statuses: ['healthy'] },
  all: { label: 'All bands', statuses: [undefined] },
} as const satisfies Record<string, { label: string; statuses: readonly (Status | undefined)[] }>;
export type Show = keyof typeof SHOWS;

export const SORTS = {
  score: 'Lowest score first',
  '-arr': 'Highest ARR first',
  renewal_at: 'Soonest renewal first',
} as const;
export type Sort = keyof typeof SORTS;

export const RENEWALS = {
  '30': 'in the next 30 days',
  '90': 'in the next 90 days',
  '365': 'in the next year',
};
export type Renewal = keyof typeof RENEWALS;

export const LIFECYCLES = {
  active: 'Active customers',
  churned: 'Churned customers',
  all: 'Active and churned',
};
export type Lifecycle = keyof typeof LIFECYCLES;

export interface PortfolioView {
  show: Show;
  sort: Sort;
  /** An email, 'me' or 'none'; '' for anyone. */
  owner: string;
  renewal: Renewal | '';
  /** '' for the API's default (active only). */
  lifecycle: Lifecycle | '';
  segment: Segment | null;
}

const METADATA = /^metadata\[(.+)\]$/;
const pick = <K extends string>(table: Record<K, unknown>, value: string | null): K | undefined =>
  value !== null && Object.hasOwn(table, value) ? (value as K) : undefined;

/** The view a query string names; what it does not name (or names wrongly) is the default. */
export function parseView(search: string): PortfolioView {
  const q = new URLSearchParams(search);
  let segment: Segment | null = null;
  for (const [name, value] of q) {
    const key = METADATA.exec(name)?.[1];
    if (key !== undefined) segment = { key, value };
  }
  return {
    show: pick(SHOWS, q.get('show')) ?? 'attention',
    sort: pick(SORTS, q.get('sort')) ?? 'score',
    owner: q.get('owner') ?? '',
    renewal: pick(RENEWALS, q.get('renewal')) ?? '',
    lifecycle: pick(LIFECYCLES, q.get('lifecycle')) ?? '',
    segment,
  };
}

/** The query string of a view (with its '?', or '' for the default view). */
export function viewSearch(view: PortfolioView): string {
  const q = new URLSearchParams();
  if (view.show !== 'attention') q.set('show', view.show);
  if (view.sort !== 'score') q.set('sort', view.sort);
  if (view.owner !== '') q.set('owner', view.owner);
  if (view.renewal !== '') q.set('renewal', view.renewal);
  if (view.lifecycle !== '') q.set('lifecycle', view.lifecycle);
  if (view.segment) q.set(`metadata[${view.segment.key}]`, view.segment.value);
  const text = q.toString();
  return text ? `?${text}` : '';
}

/** The API's filter parameters of a view, as of `now` (every panel's and list's). */
export function apiFilters(view: PortfolioView, now = Date.now()): Record<string, string> {
  const params: Record<string, string> = {};
  if (view.owner !== '') params.owner = view.owner;
  if (view.renewal !== '') {
    params.renewal_after = new Date(now).toISOString();
    params.renewal_before = new Date(now + Number(view.renewal) * 86_400_000).toISOString();
  }
  if (view.lifecycle !== '') params.lifecycle = view.lifecycle;
  if (view.segment) params[`metadata[${view.segment.key}]`] = view.segment.value;
  return params;
}

/** A short description of the view's filters for a person ("" when it has none). */
export function describeFilters(view: PortfolioView): string {
  const parts: string[] = [];
  if (view.owner === 'me') parts.push('your customers');
  else if (view.owner === 'none') parts.push('customers without an owner');
  else if (view.owner !== '') parts.push(`customers of ${view.owner}`);
  if (view.renewal !== '') parts.push(`renewing ${RENEWALS[view.renewal]}`);
  if (view.lifecycle !== '') parts.push(LIFECYCLES[view.lifecycle].toLowerCase());
  if (view.segment) parts.push(`whose ${view.segment.key} is ${view.segment.value}`);
  return parts.join(', ');
}
