// My book (docs/dashboard.md, "My book"): the home of a person who owns customers — their accounts
// by band with ARR and the ARR at risk, their renewals of the next 90 days with each one's score,
// and this week's biggest drops among them. Every figure is the API's with `owner=me`.
import { useState } from 'preact/hooks';
import { api, type PortfolioEntry, query, type Summary } from '../api.ts';
import { date, score, shortMoney } from '../format.ts';
import { apiFilters, parseView, viewSearch } from '../portfolio-view.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, Loading, Page, StatusBadge, useLoad } from '../ui.tsx';
import { fromToday } from './customer-book.tsx';
import type { Filters } from './portfolio.tsx';
import { BandCards } from './portfolio.tsx';
import { DropsPanel } from './portfolio-panels.tsx';

const MINE = parseView('?owner=me');
const RENEWING = parseView('?owner=me&renewal=90&sort=renewal_at&show=all');

export function MyBookPage() {
  const [opened] = useState(() => Date.now());
  const mine: Filters = { params: apiFilters(MINE, opened), key: viewSearch(MINE) };
  const summary = useLoad(
    (signal) => api.get<Summary>(`/api/health-scores/summary${query(mine.params)}`, signal),
    [],
  );
  return (
    <Page title="My book">
      <p>
        The customers you own.{' '}
        <Link href={`${paths.portfolio}${viewSearch(MINE)}`}>Open them in the portfolio</Link> to filter and
        sort them further.
      </p>
      <ErrorMessage error={summary.error} />
      <section aria-labelledby="book-bands-title">
        <h2 id="book-bands-title" class="sr-only">
          Your customers per status band
        </h2>
        <BandCards summary={summary.data} />
      </section>
      <Renewals opened={opened} />
      <DropsPanel filters={mine} />
    </Page>
  );
}

/** The person's renewals of the next 90 days, soonest first, with each customer's score. */
function Renewals({ opened }: { opened: number }) {
  const page = useLoad(
    (signal) =>
      api.get<{ data: PortfolioEntry[]; next_cursor: string | null }>(
        `/api/health-scores${query({ limit: 50, sort: 'renewal_at', ...apiFilters(RENEWING, opened) })}`,
        signal,
      ),
    [],
  );
  return (
    <section aria-labelledby="renewals-title" class="card">
      <div class="section-head">
        <h2 id="renewals-title">Renewals in the next 90 days</h2>
        <Link href={`${paths.portfolio}${viewSearch(RENEWING)}`}>All of them</Link>
      </div>
      <ErrorMessage error={page.error} />
      {page.loading && !page.data && <Loading what="your renewals" />}
      {page.data && page.data.data.length === 0 && <p>None of your customers renews in the next 90 days.</p>}
      {page.data && page.data.data.length > 0 && (
        <div class="table-wrap">
          <table class="scores">
            <thead>
              <tr>
                <th scope="col">Customer</th>
                <th scope="col">Renews</th>
                <th scope="col" class="num">
                  ARR
                </th>
                <th scope="col" class="num">
                  Score
                </th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {page.data.data.map((r) => (
                <tr key={r.customer_id}>
                  <td>
                    <Link href={paths.customer(r.customer_id)}>{r.name}</Link>
                    <span class="sub">{r.customer_id}</span>
                  </td>
                  <td>
                    {r.renewal_at && date(r.renewal_at)}
                    {r.renewal_at && <span class="sub">{fromToday(r.renewal_at, opened)}</span>}
                  </td>
                  <td class="num">{r.arr === null ? '—' : shortMoney(r.arr)}</td>
                  <td class="num">{score(r.health_score)}</td>
                  <td>
                    <StatusBadge status={r.status} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {page.data?.next_cursor && <p class="hint">The 50 soonest are listed.</p>}
    </section>
  );
}
