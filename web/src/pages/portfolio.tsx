import { useState } from 'preact/hooks';
import {
  api,
  type Customer,
  can,
  type Distribution,
  type PortfolioEntry,
  query,
  type Segment,
  STATUSES,
  type Status,
  type Summary,
  segmentParams,
  type Thresholds,
} from '../api.ts';
import { Histogram } from '../charts.tsx';
import { count, STATUS_LABEL, score, when } from '../format.ts';
import { CsvImport } from '../import.tsx';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, Loading, Page, Pager, PinnedBadge, StatusBadge, useLoad } from '../ui.tsx';
import { DropsPanel, SegmentPicker, TrendPanel } from './portfolio-panels.tsx';

const PAGE_SIZE = 20;

export function PortfolioPage() {
  // An import changes what every panel shows: a new round loads them all again.
  const [round, setRound] = useState(0);
  // The segment every panel shows (none: every customer); a change of it reloads them all too.
  const [segment, setSegment] = useState<Segment | null>(null);
  const seg = segment ? `${segment.key}=${segment.value}` : '';
  const summary = useLoad(
    (signal) => api.get<Summary>(`/api/health-scores/summary${query(segmentParams(segment))}`, signal),
    [round, seg],
  );
  return (
    <Page title="Portfolio">
      <SegmentPicker segment={segment} onChange={setSegment} />
      <ErrorMessage error={summary.error} />
      <section aria-labelledby="bands-title">
        <h2 id="bands-title" class="sr-only">
          Customers per status band
        </h2>
        <ul class="cards">
          <li class="card stat">
            <span class="label">Customers with a score</span>
            <span class="value">{summary.data ? count(summary.data.total) : '…'}</span>
          </li>
          {STATUSES.map((s) => (
            <li key={s} class={`card stat ${s}`}>
              <span class="label">{STATUS_LABEL[s]}</span>
              <span class="value">{summary.data ? count(summary.data.counts[s]) : '…'}</span>
            </li>
          ))}
        </ul>
      </section>
      <TrendPanel key={`trend ${round}`} segment={segment} />
      <DropsPanel key={`drops ${round}`} segment={segment} />
      <DistributionPanel key={`${round} ${seg}`} segment={segment} />
      <Search segment={segment} />
      {/* The list skips bands the summary counts as empty, so it waits for the summary. */}
      {(summary.data || summary.error) && (
        <ScoreList key={`${round} ${seg}`} counts={summary.data?.counts} segment={segment} />
      )}
      {can('edit customers') && <CsvImport onImported={() => setRound((r) => r + 1)} />}
    </Page>
  );
}

function DistributionPanel({ segment }: { segment: Segment | null }) {
  const chart = useLoad(async (signal) => {
    const [distribution, thresholds] = await Promise.all([
      api.get<Distribution>(`/api/health-scores/distribution${query(segmentParams(segment))}`, signal),
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
            {`All ${count(data.distribution.total)} scores${segment ? ' of the segment' : ''}, in bins of 0.05, coloured by band. Dashed lines mark the band thresholds: at risk from ${data.thresholds.at_risk}, healthy from ${data.thresholds.healthy}.`}
          </p>
        </>
      )}
    </section>
  );
}

const FILTERS = {
  attention: { label: 'Needs attention (critical, then at risk)', statuses: ['critical', 'at_risk'] },
  critical: { label: 'Critical', statuses: ['critical'] },
  at_risk: { label: 'At risk', statuses: ['at_risk'] },
  healthy: { label: 'Healthy', statuses: ['healthy'] },
  all: { label: 'All, lowest first', statuses: [undefined] },
} as const satisfies Record<string, { label: string; statuses: readonly (Status | undefined)[] }>;
type Filter = keyof typeof FILTERS;

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
  segment: Segment | null,
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
      `/api/health-scores${query({ status: statuses[index], limit: PAGE_SIZE - rows.length, cursor, ...segmentParams(segment) })}`,
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

function ScoreList({
  counts,
  segment,
}: {
  counts: Record<Status, number> | undefined;
  segment: Segment | null;
}) {
  const [filter, setFilter] = useState<Filter>('attention');
  const [starts, setStarts] = useState<Start[]>([{ index: 0, cursor: null }]);
  const start = starts.at(-1) as Start;
  const page = useLoad(
    (signal) => loadScores(FILTERS[filter].statuses, start, counts, segment, signal),
    [filter, start, counts],
  );
  const choose = (f: Filter) => {
    setFilter(f);
    setStarts([{ index: 0, cursor: null }]);
  };
  return (
    <section aria-labelledby="scores-title" class="card">
      <div class="section-head">
        <h2 id="scores-title">Customers by health</h2>
        <div class="inline-field">
          <label for="score-filter">Show</label>
          <select id="score-filter" value={filter} onChange={(e) => choose(e.currentTarget.value as Filter)}>
            {Object.entries(FILTERS).map(([value, f]) => (
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
        <p>{filter === 'attention' ? 'No customer is critical or at risk.' : 'No customers here.'}</p>
      )}
      {page.data && page.data.rows.length > 0 && (
        <div class="table-wrap">
          <table class="scores" aria-busy={page.loading}>
            <thead>
              <tr>
                <th scope="col">Customer</th>
                <th scope="col" class="num">
                  Score
                </th>
                <th scope="col">Status</th>
                <th scope="col" class="wide-only">
                  Updated
                </th>
              </tr>
            </thead>
            <tbody>
              {page.data.rows.map((r) => (
                <tr key={r.customer_id}>
                  <td>
                    <Link href={paths.customer(r.customer_id)}>{r.name}</Link>
                    <span class="sub">{r.customer_id}</span>
                  </td>
                  <td class="num">
                    {score(r.health_score)}
                    {r.override && <PinnedBadge override={r.override} />}
                  </td>
                  <td>
                    <StatusBadge status={r.status} />
                  </td>
                  <td class="wide-only">{when(r.updated_at)}</td>
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

function Search({ segment }: { segment: Segment | null }) {
  const [text, setText] = useState('');
  const [term, setTerm] = useState<string>();
  const [afters, setAfters] = useState<(string | undefined)[]>([undefined]);
  const after = afters.at(-1);
  const results = useLoad(
    async (signal) =>
      term === undefined
        ? undefined
        : api.get<{ customers: Customer[]; has_more: boolean }>(
            `/api/customers${query({ search: term, limit: PAGE_SIZE, starting_after: after, ...segmentParams(segment) })}`,
            signal,
          ),
    [term, after, segment?.key, segment?.value],
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
