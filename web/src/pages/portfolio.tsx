import { useState } from 'preact/hooks';
import {
  api,
  type Customer,
  can,
  type Distribution,
  type PortfolioEntry,
  query,
  STATUSES,
  type Status,
  type Summary,
  type Thresholds,
} from '../api.ts';
import { Histogram } from '../charts.tsx';
import { count, date, money, STATUS_LABEL, score, shortMoney } from '../format.ts';
import { CsvImport } from '../import.tsx';
import {
  apiFilters,
  type PortfolioView,
  parseView,
  SHOWS,
  type Show,
  type Sort,
  viewSearch,
} from '../portfolio-view.ts';
import { Link, navigate, paths, useSearch } from '../router.tsx';
import { ErrorMessage, Loading, Page, Pager, PinnedBadge, StatusBadge, useLoad } from '../ui.tsx';
import { ChurnedBadge } from './customer-book.tsx';
import { BookFilters } from './portfolio-filters.tsx';
import { DropsPanel, SegmentPicker, TrendPanel } from './portfolio-panels.tsx';

/** The filters every panel is given, and a key that changes exactly when they do. */
export interface Filters {
  params: Record<string, string>;
  key: string;
}

const PAGE_SIZE = 20;

export function PortfolioPage() {
  // An import changes what every panel shows: a new round loads them all again.
  const [round, setRound] = useState(0);
  // Every filter and the sort live in the URL (../portfolio-view.ts): a change is a new entry of
  // the history, so Back returns to the last view, and a bookmark or a saved view opens this one.
  const view = parseView(useSearch());
  const setView = (next: PortfolioView) => navigate(`${paths.portfolio}${viewSearch(next)}`);
  const filterSearch = viewSearch({ ...view, show: 'attention', sort: 'score' });
  // The renewal window is counted from when the view was opened: panels load as of one instant.
  const [opened] = useState(() => Date.now());
  const filters: Filters = { params: apiFilters(view, opened), key: filterSearch };
  const summary = useLoad(
    (signal) => api.get<Summary>(`/api/health-scores/summary${query(filters.params)}`, signal),
    [round, filters.key],
  );
  return (
    <Page title="Portfolio">
      <BookFilters key={filters.key} view={view} onView={setView} />
      <SegmentPicker segment={view.segment} onChange={(segment) => setView({ ...view, segment })} />
      <ErrorMessage error={summary.error} />
      <section aria-labelledby="bands-title">
        <h2 id="bands-title" class="sr-only">
          Customers per status band
        </h2>
        <BandCards summary={summary.data} />
      </section>
      <TrendPanel key={`trend ${round} ${filters.key}`} filters={filters} />
      <DropsPanel key={`drops ${round} ${filters.key}`} filters={filters} />
      <DistributionPanel key={`${round} ${filters.key}`} filters={filters} />
      <Search filters={filters} />
      {/* The list skips bands the summary counts as empty, so it waits for the summary. */}
      {(summary.data || summary.error) && (
        <ScoreList
          key={`${round} ${filters.key}`}
          counts={summary.data?.counts}
          filters={filters}
          show={view.show}
          sort={view.sort}
          onShow={(show) => setView({ ...view, show })}
          onSort={(sort) => setView({ ...view, sort })}
        />
      )}
      {can('edit customers') && <CsvImport onImported={() => setRound((r) => r + 1)} />}
    </Page>
  );
}

/** The customers and their ARR per band, and the ARR at risk (at risk and critical together). */
export function BandCards({ summary }: { summary: Summary | undefined }) {
  return (
    <ul class="cards">
      <li class="card stat">
        <span class="label">Customers with a score</span>
        <span class="value">{summary ? count(summary.total) : '…'}</span>
        {summary && <span class="sub">{`ARR ${money(summary.arr.total)}`}</span>}
      </li>
      {STATUSES.map((s) => (
        <li key={s} class={`card stat ${s}`}>
          <span class="label">{STATUS_LABEL[s]}</span>
          <span class="value">{summary ? count(summary.counts[s]) : '…'}</span>
          {summary && <span class="sub">{`ARR ${money(summary.arr[s])}`}</span>}
        </li>
      ))}
      <li class="card stat at_risk">
        <span class="label">ARR at risk</span>
        <span class="value">{summary ? shortMoney(summary.arr_at_risk) : '…'}</span>
        {summary && <span class="sub">at risk and critical</span>}
      </li>
    </ul>
  );
}

function DistributionPanel({ filters }: { filters: Filters }) {
  const chart = useLoad(async (signal) => {
    const [distribution, thresholds] = await Promise.all([
      api.get<Distribution>(`/api/health-scores/distribution${query(filters.params)}`, signal),
      api.get<Thresholds>('/api/settings/health-score/thresholds', signal),
    ]);
    return { distribution, thresholds };
  }, []);
  const data = chart.data;
  return (
    <section aria-labelledby="distribution-title" class="card">
      <h2 id="distribution-title">Score distribution</h2>
      <ErrorMessage error={chart.error} />
      {chart.loading && !data && <Loading what="the score distribution" />}
      {data && (
        <>
          <Histogram bins={data.distribution.bins} thresholds={data.thresholds} />
          <p class="hint">
            {`All ${count(data.distribution.total)} scores${filters.key ? ' of the filtered customers' : ''}, in bins of 0.05, coloured by band. Dashed lines mark the band thresholds: at risk from ${data.thresholds.at_risk}, healthy from ${data.thresholds.healthy}.`}
          </p>
        </>
      )}
    </section>
  );
}

/** Where a page starts: which of the filter's statuses, and the cursor within it. */
interface Start {
  index: number;
  cursor: string | null;
}

/**
 * One page of scores over several statuses in turn (critical, then at_risk): a page that
 * finishes one status fills up from the next. Statuses the summary counts as empty are skipped.
 */
async function loadScores(
  statuses: readonly (Status | undefined)[],
  start: Start,
  counts: Record<Status, number> | undefined,
  filters: Filters,
  sort: Sort,
  signal: AbortSignal,
) {
  const rows: PortfolioEntry[] = [];
  let { index, cursor } = start;
  const empty = (i: number) => {
    const s = statuses[i];
    return s !== undefined && counts !== undefined && counts[s] === 0;
  };
  while (index < statuses.length && empty(index)) index++;
  while (rows.length < PAGE_SIZE && index < statuses.length) {
    const page: { data: PortfolioEntry[]; next_cursor: string | null } = await api.get(
      `/api/health-scores${query({ status: statuses[index], limit: PAGE_SIZE - rows.length, cursor, sort: sort === 'score' ? undefined : sort, ...filters.params })}`,
      signal,
    );
    rows.push(...page.data);
    cursor = page.next_cursor;
    if (cursor === null) {
      index++;
      while (index < statuses.length && empty(index)) index++;
    }
  }
  const next: Start | null = index < statuses.length ? { index, cursor } : null;
  return { rows, next };
}

function ScoreList(props: {
  counts: Record<Status, number> | undefined;
  filters: Filters;
  show: Show;
  sort: Sort;
  onShow: (show: Show) => void;
  onSort: (sort: Sort) => void;
}) {
  const { show, sort } = props;
  const [starts, setStarts] = useState<Start[]>([{ index: 0, cursor: null }]);
  const start = starts.at(-1) as Start;
  const page = useLoad(
    (signal) => loadScores(SHOWS[show].statuses, start, props.counts, props.filters, sort, signal),
    [show, sort, start, props.counts],
  );
  /** A column's header: a button that orders the list by it (the current order marked). */
  const sortBy = (by: Sort, label: string) => (
    <button
      type="button"
      class="link sort"
      aria-pressed={sort === by}
      onClick={() => {
        setStarts([{ index: 0, cursor: null }]);
        props.onSort(by);
      }}
    >
      {label}
      {sort === by ? ' ▾' : ''}
    </button>
  );
  return (
    <section aria-labelledby="scores-title" class="card">
      <div class="section-head">
        <h2 id="scores-title">Customers by health</h2>
        <div class="inline-field">
          <label for="score-filter">Show</label>
          <select
            id="score-filter"
            value={show}
            onChange={(e) => {
              setStarts([{ index: 0, cursor: null }]);
              props.onShow(e.currentTarget.value as Show);
            }}
          >
            {Object.entries(SHOWS).map(([value, f]) => (
              <option key={value} value={value}>
                {f.label}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ErrorMessage error={page.error} />
      {page.loading && !page.data && <Loading what="customers" />}
      {page.data && page.data.rows.length === 0 && (
        <p>{show === 'attention' ? 'No customer is critical or at risk.' : 'No customers here.'}</p>
      )}
      {page.data && page.data.rows.length > 0 && (
        <div class="table-wrap">
          <table class="scores" aria-busy={page.loading}>
            <thead>
              <tr>
                <th scope="col">Customer</th>
                <th scope="col" class="num" aria-sort={sort === 'score' ? 'ascending' : undefined}>
                  {sortBy('score', 'Score')}
                </th>
                <th scope="col">Status</th>
                <th scope="col" class="wide-only">
                  Owner
                </th>
                <th scope="col" class="num" aria-sort={sort === '-arr' ? 'descending' : undefined}>
                  {sortBy('-arr', 'ARR')}
                </th>
                <th scope="col" class="wide-only" aria-sort={sort === 'renewal_at' ? 'ascending' : undefined}>
                  {sortBy('renewal_at', 'Renewal')}
                </th>
              </tr>
            </thead>
            <tbody>
              {page.data.rows.map((r) => (
                <tr key={r.customer_id}>
                  <td>
                    <Link href={paths.customer(r.customer_id)}>{r.name}</Link> <ChurnedBadge customer={r} />
                    <span class="sub">{r.customer_id}</span>
                  </td>
                  <td class="num">
                    {score(r.health_score)}
                    {r.override && <PinnedBadge override={r.override} />}
                  </td>
                  <td>
                    <StatusBadge status={r.status} />
                  </td>
                  <td class="wide-only break">{r.owner ?? '—'}</td>
                  <td class="num">{r.arr === null ? '—' : shortMoney(r.arr)}</td>
                  <td class="wide-only">{r.renewal_at === null ? '—' : date(r.renewal_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        label="Pages of customers by health"
        page={starts.length}
        hasNext={page.data?.next != null}
        busy={page.loading}
        onPrevious={() => setStarts(starts.slice(0, -1))}
        onNext={() => page.data?.next && setStarts([...starts, page.data.next])}
      />
    </section>
  );
}

function Search({ filters }: { filters: Filters }) {
  const [text, setText] = useState('');
  const [term, setTerm] = useState<string>();
  const [afters, setAfters] = useState<(string | undefined)[]>([undefined]);
  const after = afters.at(-1);
  const results = useLoad(
    async (signal) =>
      term === undefined
        ? undefined
        : api.get<{ customers: Customer[]; has_more: boolean }>(
            `/api/customers${query({ search: term, limit: PAGE_SIZE, starting_after: after, ...filters.params })}`,
            signal,
          ),
    [term, after, filters.key],
  );
  const submit = (e: Event) => {
    e.preventDefault();
    const t = text.trim();
    setTerm(t === '' ? undefined : t);
    setAfters([undefined]);
  };
  const clear = () => {
    setText('');
    setTerm(undefined);
    setAfters([undefined]);
  };
  const data = results.data;
  return (
    <section aria-labelledby="search-title" class="card">
      <h2 id="search-title">Find a customer</h2>
      <search>
        <form onSubmit={submit} class="search-row">
          <label for="search" class="sr-only">
            Search customers by id, name or email
          </label>
          <input
            id="search"
            type="search"
            placeholder="Id, name or email"
            maxLength={255}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
          />
          <button type="submit">Search</button>
          {term !== undefined && (
            <button type="button" class="secondary" onClick={clear}>
              Clear
            </button>
          )}
        </form>
      </search>
      <ErrorMessage error={results.error} />
      {term !== undefined && data && (
        <div aria-live="polite">
          {data.customers.length === 0 ? (
            <p>No customer's id, name or email contains “{term}”.</p>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="sr-only">Customers matching “{term}”</caption>
                <thead>
                  <tr>
                    <th scope="col">Customer</th>
                    <th scope="col">Email</th>
                  </tr>
                </thead>
                <tbody>
                  {data.customers.map((c) => (
                    <tr key={c.id}>
                      <td>
                        <Link href={paths.customer(c.id)}>{c.name}</Link>
                        <span class="sub">{c.id}</span>
                      </td>
                      <td class="break">{c.email}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager
            label="Pages of search results"
            page={afters.length}
            hasNext={data.has_more}
            busy={results.loading}
            onPrevious={() => setAfters(afters.slice(0, -1))}
            onNext={() => setAfters([...afters, data.customers.at(-1)?.id])}
          />
        </div>
      )}
    </section>
  );
}
