// The portfolio's morning panels: the segment picker that filters every panel, the trend of the
// band counts, and the biggest drops of the week (docs/dashboard.md, "Portfolio").
import { useState } from 'preact/hooks';
import { api, type Mover, query, type Segment, type Summary } from '../api.ts';
import { STACK, TrendChart, type TrendDay } from '../charts.tsx';
import { count, STATUS_LABEL, score, utcDate } from '../format.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, Loading, StatusBadge, useLoad } from '../ui.tsx';
import type { Filters } from './portfolio.tsx';

/** A metadata value as a filter's VALUE: a string as it is, a number or boolean as its JSON text. */
const filterValue = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
const filterable = (value: unknown) => ['string', 'number', 'boolean'].includes(typeof value);

/**
 * Choose a metadata key, then one of its values (each shown with its customers and average,
 * worst first, from the grouped summary): every panel of the page then shows that segment alone.
 */
export function SegmentPicker({
  segment,
  onChange,
}: {
  segment: Segment | null;
  onChange: (s: Segment | null) => void;
}) {
  const [key, setKey] = useState(segment?.key ?? '');
  const [groupKey, setGroupKey] = useState<string | null>(segment?.key ?? null);
  const groups = useLoad(
    async (signal) =>
      groupKey === null
        ? undefined
        : api.get<Summary>(
            `/api/health-scores/summary${query({ group_by: `metadata.${groupKey}` })}`,
            signal,
          ),
    [groupKey],
  );
  const values = (groups.data?.groups ?? []).filter((g) => filterable(g.value));
  const submit = (e: Event) => {
    e.preventDefault();
    const k = key.trim();
    setGroupKey(k === '' ? null : k);
    if (k === '') onChange(null);
  };
  return (
    <section aria-labelledby="segment-title" class="card">
      <h2 id="segment-title">Segment</h2>
      <form onSubmit={submit} class="search-row">
        <label for="segment-key" class="sr-only">
          Metadata key
        </label>
        <input
          id="segment-key"
          type="text"
          placeholder="Metadata key, e.g. plan"
          maxLength={64}
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit">Show values</button>
      </form>
      <ErrorMessage error={groups.error} />
      {groupKey !== null && groups.data && values.length === 0 && (
        <p>No scored customer has a text, number or true/false value under “{groupKey}”.</p>
      )}
      {groupKey !== null && values.length > 0 && (
        <div class="inline-field">
          <label for="segment-value">Show only customers whose {groupKey} is</label>
          <select
            id="segment-value"
            value={segment?.key === groupKey ? segment.value : ''}
            onChange={(e) => {
              const v = e.currentTarget.value;
              onChange(v === '' ? null : { key: groupKey, value: v });
            }}
          >
            <option value="">(any: all customers)</option>
            {values.map((g) => (
              <option key={filterValue(g.value)} value={filterValue(g.value)}>
                {`${filterValue(g.value)}: ${count(g.total)} customers, average ${score(g.average)}`}
              </option>
            ))}
          </select>
        </div>
      )}
      {segment && (
        <p class="hint" role="status">
          Every panel shows the customers whose <code>{segment.key}</code> is <code>{segment.value}</code>.{' '}
          <button
            type="button"
            class="link"
            onClick={() => {
              onChange(null);
            }}
          >
            Show everyone
          </button>
        </p>
      )}
    </section>
  );
}

const SPANS = [30, 90, 365] as const;

export function TrendPanel({ filters }: { filters: Filters }) {
  const [days, setDays] = useState<number>(30);
  const trend = useLoad(
    (signal) =>
      api.get<{ data: TrendDay[] }>(`/api/health-scores/trend${query({ days, ...filters.params })}`, signal),
    [days, filters.key],
  );
  return (
    <section aria-labelledby="trend-title" class="card">
      <div class="section-head">
        <h2 id="trend-title">Band counts over time</h2>
        <div class="inline-field">
          <label for="trend-days">Over the last</label>
          <select id="trend-days" value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            {SPANS.map((d) => (
              <option key={d} value={d}>
                {d} days
              </option>
            ))}
          </select>
        </div>
      </div>
      <ErrorMessage error={trend.error} />
      {trend.loading && !trend.data && <Loading what="the trend" />}
      {trend.data && <TrendView days={trend.data.data} />}
      <p class="hint">Customers per band at the end of each day (UTC), from the score history.</p>
    </section>
  );
}

/**
 * The days before the first score are not days of zero customers: the chart starts where the history
 * does and says so; a history of one day (today) is told in words, as a chart of one day is a line.
 */
function TrendView({ days }: { days: TrendDay[] }) {
  const first = days.findIndex((d) => d.total > 0);
  if (first === -1)
    return <p data-testid="history-start">No scores yet: the chart starts with the first one.</p>;
  const shown = days.slice(first);
  const start = shown[0] as TrendDay;
  if (shown.length === 1) {
    const bands = STACK.map((s) => `${count(start.counts[s])} ${STATUS_LABEL[s].toLowerCase()}`).join(', ');
    return (
      <p data-testid="history-start">
        {`History starts today (${utcDate(start.date)}): ${count(start.total)} customers with a score, ${bands}. The chart fills in day by day.`}
      </p>
    );
  }
  return (
    <>
      {first > 0 && (
        <p class="hint" data-testid="history-start">
          {`History starts on ${utcDate(start.date)}: the chart begins there.`}
        </p>
      )}
      <TrendChart days={shown} />
      <ul class="legend" aria-hidden="true">
        {(['healthy', 'at_risk', 'critical'] as const).map((s) => (
          <li key={s} class={s}>
            {STATUS_LABEL[s]}
          </li>
        ))}
      </ul>
    </>
  );
}

export function DropsPanel({ filters }: { filters: Filters }) {
  const drops = useLoad(
    (signal) =>
      api.get<{ data: Mover[] }>(
        `/api/health-scores/movers${query({ days: 7, direction: 'down', limit: 10, ...filters.params })}`,
        signal,
      ),
    [filters.key],
  );
  const rows = drops.data?.data;
  return (
    <section aria-labelledby="drops-title" class="card">
      <h2 id="drops-title">Biggest drops this week</h2>
      <ErrorMessage error={drops.error} />
      {drops.loading && !rows && <Loading what="this week's drops" />}
      {rows && rows.length === 0 && <p>No customer's score fell in the last 7 days.</p>}
      {rows && rows.length > 0 && (
        <div class="table-wrap">
          <table class="scores drops">
            <thead>
              <tr>
                <th scope="col">Customer</th>
                <th scope="col" class="num">
                  Change
                </th>
                <th scope="col" class="num">
                  Now
                </th>
                <th scope="col" class="num wide-only">
                  7 days ago
                </th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((m) => (
                <tr key={m.customer_id}>
                  <td>
                    <Link href={paths.customer(m.customer_id)}>{m.name}</Link>
                    <span class="sub">{m.customer_id}</span>
                  </td>
                  <td class="num drop">{m.change.toFixed(2)}</td>
                  <td class="num">{score(m.health_score)}</td>
                  <td class="num wide-only">{score(m.baseline_score)}</td>
                  <td>
                    <StatusBadge status={m.status} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
