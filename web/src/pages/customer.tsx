import { Fragment } from 'preact';
import { useRef, useState } from 'preact/hooks';
import {
  ApiError,
  api,
  type Customer,
  can,
  customerPath,
  type FactorRule,
  type HealthScore,
  type HistoryEntry,
  type Page as ListPage,
  type MetricPoint,
  query,
  type Thresholds,
  type WeightsAnswer,
} from '../api.ts';
import { HistoryChart, Sparkline } from '../charts.tsx';
import { count, date, day, REASON_LABEL, score, time, when } from '../format.ts';
import { Link, paths } from '../router.tsx';
import { aggregateWords, cappedWords, plain, windowDaysOf } from '../rules.ts';
import { ErrorMessage, Loading, Notice, Page, PinnedBadge, StatusBadge, useLoad } from '../ui.tsx';
import { BookDetails, ChurnedBadge, HierarchyCard } from './customer-book.tsx';
import { EditCustomer } from './customer-edit.tsx';
import { WhyPanel } from './customer-explain.tsx';
import { NotesCard } from './customer-notes.tsx';
import { OutcomesCard } from './customer-outcomes.tsx';
import { OverrideForm } from './customer-override.tsx';
import { SourceTouch } from './customer-sources.tsx';
import { TasksCard } from './customer-tasks.tsx';
import { TimelineCard } from './customer-timeline.tsx';

/** The chart pages through the history, newest first, up to this many changes. */
const HISTORY_CAP = 1000;

async function loadCustomer(id: string, signal: AbortSignal) {
  const [customer, current, weights, thresholds, rules] = await Promise.all([
    api.get<Customer>(customerPath(id), signal),
    api.get<HealthScore>(`${customerPath(id)}/health-score`, signal).catch((err) => {
      if (err instanceof ApiError && err.code === 'health_score_not_found') return null;
      throw err;
    }),
    api.get<WeightsAnswer>('/api/settings/health-score/weights', signal),
    api.get<Thresholds>('/api/settings/health-score/thresholds', signal),
    api.get<{ data: FactorRule[] }>('/api/settings/health-score/factors', signal),
  ]);
  return { customer, current, weights: weights.weights, thresholds, rules: rules.data };
}

async function loadHistory(id: string, signal: AbortSignal) {
  const entries: HistoryEntry[] = [];
  let more = true;
  while (more && entries.length < HISTORY_CAP) {
    const page: ListPage<HistoryEntry> = await api.get(
      `${customerPath(id)}/health-score/history${query({ limit: 100, starting_after: entries.at(-1)?.version })}`,
      signal,
    );
    entries.push(...page.data);
    more = page.has_more;
  }
  return { entries, capped: more };
}

export function CustomerPage({ id }: { id: string }) {
  const loaded = useLoad((signal) => loadCustomer(id, signal), [id]);
  const history = useLoad((signal) => loadHistory(id, signal), [id]);
  const [saved, setSaved] = useState(false);
  // The version "Why this score" explains (null: the current one), and a round that reloads it.
  const [version, setVersion] = useState<number | null>(null);
  const [round, setRound] = useState(0);
  const [pinned, setPinned] = useState<string>();
  const whyHeading = useRef<HTMLHeadingElement>(null);
  const explain = (v: number | null) => {
    setVersion(v === history.data?.entries[0]?.version ? null : v);
    whyHeading.current?.scrollIntoView({ block: 'start' });
    whyHeading.current?.focus();
  };

  if (loaded.error) {
    const missing = loaded.error instanceof ApiError && loaded.error.status === 404;
    return (
      <Page title={missing ? 'Customer not found' : 'Customer'}>
        <ErrorMessage error={loaded.error} />
        <p>
          <Link href={paths.portfolio}>Back to the portfolio</Link>
        </p>
      </Page>
    );
  }
  const data = loaded.data;
  if (!data) return <Loading what="the customer" />;
  const { customer, current, weights, thresholds, rules } = data;
  return (
    <Page
      title={customer.name}
      subtitle={
        <>
          <span class="mono">{customer.id}</span> · <span class="break">{customer.email}</span>{' '}
          <ChurnedBadge customer={customer} />
        </>
      }
    >
      <div class="grid">
        <section aria-labelledby="score-title" class="card">
          <h2 id="score-title">Health score</h2>
          {current ? (
            <CurrentScore current={current} weights={weights} rules={rules} customerId={customer.id} />
          ) : (
            <p>This customer has no health score yet.</p>
          )}
        </section>
        <section aria-labelledby="details-title" class="card">
          <h2 id="details-title">Details</h2>
          <dl class="details">
            <dt>Customer id</dt>
            <dd class="mono">{customer.id}</dd>
            <dt>Email</dt>
            <dd class="break">{customer.email}</dd>
            <dt>Created</dt>
            <dd>{when(customer.created_at)}</dd>
            <dt>Updated</dt>
            <dd>{when(customer.updated_at)}</dd>
          </dl>
          <SourceTouch customerId={customer.id} />
          <h3>The book</h3>
          <BookDetails customer={customer} />
          <h3>Metadata</h3>
          {Object.keys(customer.metadata).length === 0 ? (
            <p class="hint">No metadata.</p>
          ) : (
            <dl class="details">
              {Object.entries(customer.metadata).map(([k, v]) => (
                <Fragment key={k}>
                  <dt>{k}</dt>
                  <dd class="mono break">{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
                </Fragment>
              ))}
            </dl>
          )}
        </section>
      </div>
      {/* The work on the customer and its story in people's words, beside each other on a wide screen. */}
      <div class="grid">
        <TasksCard customerId={customer.id} />
        <NotesCard customerId={customer.id} />
      </div>
      <TimelineCard customerId={customer.id} />
      {current && (
        <WhyPanel
          customerId={customer.id}
          version={version}
          round={round}
          onCurrent={() => explain(null)}
          headingRef={whyHeading}
        />
      )}
      <section aria-labelledby="history-title" class="card">
        <h2 id="history-title">Score history</h2>
        <ErrorMessage error={history.error} />
        {history.loading && !history.data && <Loading what="the history" />}
        {history.data && (
          <History
            {...history.data}
            thresholds={thresholds}
            selected={version ?? history.data.entries[0]?.version}
            onSelect={explain}
          />
        )}
      </section>
      <HierarchyCard customerId={customer.id} />
      <OutcomesCard customerId={customer.id} />
      {current && can('edit customers') && (
        <section aria-labelledby="override-title" class="card">
          <h2 id="override-title">Override</h2>
          {pinned && <Notice>{pinned}</Notice>}
          <OverrideForm
            // A new override (or none) starts the form again from what now stands.
            key={current.override?.set_at ?? 'none'}
            customerId={customer.id}
            current={current}
            onChanged={(score, message) => {
              loaded.set({ ...data, current: score });
              setPinned(message);
              setVersion(null);
              setRound((r) => r + 1);
              history.reload();
            }}
          />
        </section>
      )}
      {can('edit customers') && (
        <section aria-labelledby="edit-title" class="card">
          <h2 id="edit-title">Edit customer</h2>
          {saved && <Notice>Saved.</Notice>}
          <EditCustomer
            customer={customer}
            onSaved={(updated) => {
              loaded.set({ ...data, customer: updated });
              setSaved(true);
            }}
            onChange={() => setSaved(false)}
          />
        </section>
      )}
    </Page>
  );
}

/**
 * The score, and how much each factor counts in it: its weight renormalised over the weighted
 * factors present. A factor a rule derives says so, with its metric's recent points beside it.
 */
function CurrentScore(props: {
  current: HealthScore;
  weights: Record<string, number>;
  rules: FactorRule[];
  customerId: string;
}) {
  const { current, weights } = props;
  const ruleOf = new Map(props.rules.map((r) => [r.factor, r]));
  const names = Object.keys(current.factors).sort();
  const weighted = names.filter((n) => (weights[n] ?? 0) > 0);
  const total = weighted.reduce((sum, n) => sum + (weights[n] ?? 0), 0);
  const share = (n: string) =>
    weighted.length === 0 ? 1 / names.length : weighted.includes(n) ? (weights[n] ?? 0) / total : 0;
  return (
    <>
      <p class="big-score">
        <span class="value" data-testid="current-score">
          {score(current.health_score)}
        </span>
        <StatusBadge status={current.status} />
        {current.override && <PinnedBadge override={current.override} computed={false} />}
      </p>
      {current.override && (
        <p class="pinned-note" data-testid="pinned-note">
          <strong>
            Pinned by a person: {score(current.override.health_score)} until{' '}
            {date(current.override.expires_at)}
          </strong>{' '}
          — computed {score(current.override.computed_score)} — reason “{current.override.reason}”
        </p>
      )}
      {current.gated_by.length > 0 && (
        // The status is below the score's band because a rule's gate holds it there (docs/scoring.md, "Gates").
        <p class="gated-note" data-testid="gated-note">
          {current.gated_by.map((factor, i) => {
            const gate = ruleOf.get(factor)?.gate;
            return (
              <Fragment key={factor}>
                {i > 0 && '; '}
                {gate ? cappedWords(factor, gate, current.factors[factor] ?? 0) : `Capped by ${factor}`}
              </Fragment>
            );
          })}
          : the status is at most that, whatever the score.
        </p>
      )}
      <p class="hint">Updated {when(current.updated_at)}</p>
      <div class="table-wrap">
        <table class="factors">
          <caption class="sr-only">Factors of the score</caption>
          <thead>
            <tr>
              <th scope="col">Factor</th>
              <th scope="col" class="num">
                Value
              </th>
              <th scope="col" class="num">
                Weight
              </th>
              <th scope="col" class="num">
                Counts for
              </th>
            </tr>
          </thead>
          <tbody>
            {names.map((n) => {
              const rule = ruleOf.get(n);
              return (
                <Fragment key={n}>
                  <tr class={rule ? 'derived' : undefined}>
                    <th scope="row">
                      <span class="mono">{n}</span>{' '}
                      <span
                        class={`tag ${rule ? 'derived' : 'posted'}`}
                        title={rule ? 'Derived from a metric by a factor rule' : 'Posted through the API'}
                      >
                        {rule ? 'derived' : 'posted'}
                      </span>
                    </th>
                    <td class="num">
                      <span class="meter" aria-hidden="true">
                        <span class="fill" style={{ width: `${(current.factors[n] ?? 0) * 100}%` }} />
                      </span>
                      {score(current.factors[n] ?? 0)}
                    </td>
                    {/* A share a person reads (33.3%), the exact weight on hover. */}
                    <td class="num" title={weights[n] === undefined ? undefined : `Weight ${weights[n]}`}>
                      {weights[n] === undefined ? '—' : `${Math.round(weights[n] * 1000) / 10}%`}
                    </td>
                    <td class="num">{Math.round(share(n) * 1000) / 10}%</td>
                  </tr>
                  {rule && (
                    <tr class="factor-source">
                      <td colSpan={4}>
                        <FactorMetric
                          customerId={props.customerId}
                          rule={rule}
                          scoredAt={Date.parse(current.updated_at)}
                        />
                      </td>
                    </tr>
                  )}
                </Fragment>
              );
            })}
          </tbody>
        </table>
      </div>
      <p class="hint">
        {current.override &&
          `These factors compute ${score(current.override.computed_score)}; the score shown is pinned. `}
        {weighted.length === 0
          ? 'No weight covers these factors, so the score is their plain mean.'
          : 'The score is the weighted mean of the factors that have a weight; the weights are rescaled over the factors present.'}{' '}
        <Link href={paths.settings}>Change the weights</Link>
      </p>
    </>
  );
}

/** The newest points of a rule's metric, as many as one page holds. */
const RECENT_POINTS = 100;

/**
 * Where a derived factor comes from: "from logins (sum over 30 days)", and the metric's recent points as a
 * sparkline. The newest point named is the newest the score could read, the same as "Why this score" shows:
 * a point may be dated up to 5 minutes ahead and counts from its time on (docs/scoring.md, "Factors from
 * metrics"), so one dated after the score's version is told apart, not called the latest.
 */
function FactorMetric(props: { customerId: string; rule: FactorRule; scoredAt: number }) {
  const { customerId, rule, scoredAt } = props;
  const points = useLoad(
    (signal) =>
      api.get<ListPage<MetricPoint>>(
        `${customerPath(customerId)}/metrics${query({ metric: rule.metric, limit: RECENT_POINTS })}`,
        signal,
      ),
    [customerId, rule.metric],
  );
  const series = (points.data?.data ?? []).map((p) => ({ t: Date.parse(p.at), value: p.value })).reverse();
  const first = series[0];
  const last = series.at(-1);
  const ahead = series.filter((p) => p.t > scoredAt);
  const read = series.filter((p) => p.t <= scoredAt).at(-1);
  return (
    <div class="source" data-testid={`source-${rule.factor}`}>
      <p class="source-label">
        from <span class="mono">{rule.metric}</span> ({aggregateWords(rule)})
      </p>
      {points.error !== undefined && <ErrorMessage error={points.error} />}
      {points.loading && !points.data && <Loading what={`the points of ${rule.metric}`} />}
      {points.data && (!first || !last) && <p class="hint">No points of {rule.metric}.</p>}
      {first && last && (
        <div class="spark-row">
          <Sparkline
            points={series}
            windowDays={windowDaysOf(rule)}
            label={`${rule.metric}: ${count(series.length)} ${series.length === 1 ? 'point' : 'points'} from ${day(first.t)} to ${day(last.t)}, between ${plain(Math.min(...series.map((p) => p.value)))} and ${plain(Math.max(...series.map((p) => p.value)))}${read ? `; the newest as of this score ${plain(read.value)}` : ''}${ahead.length > 0 ? `; ${plural(ahead.length)} dated after this score` : ''}.`}
          />
          <p class="hint note">
            {read ? (
              <>
                Newest point as of this score: <strong>{plain(read.value)}</strong> on {day(read.t)}
              </>
            ) : (
              'No point dated before this score.'
            )}
            {ahead.length > 0 && (
              <>
                <br />
                {`${plural(ahead.length)} dated after this score, read from ${ahead.length === 1 ? 'its' : 'their'} time on: ${ahead.map((p) => `${plain(p.value)} at ${time(p.t)}`).join(', ')}.`}
              </>
            )}
            <br />
            {points.data?.has_more ? `The latest ${count(series.length)} points` : plural(series.length)}
            {first.t !== last.t && ` since ${day(first.t)}`}
            {series.length > 1 &&
              `, from ${plain(Math.min(...series.map((p) => p.value)))} to ${plain(Math.max(...series.map((p) => p.value)))}`}
            {windowDaysOf(rule) === null ? '.' : `. Shaded: the last ${windowDaysOf(rule)} days.`}
          </p>
        </div>
      )}
    </div>
  );
}

const plural = (n: number) => `${count(n)} ${n === 1 ? 'point' : 'points'}`;

function History(props: {
  entries: HistoryEntry[];
  capped: boolean;
  thresholds: Thresholds;
  /** The version "Why this score" shows. */
  selected: number | undefined;
  onSelect: (version: number) => void;
}) {
  const points = props.entries
    .map((e) => ({
      t: Date.parse(e.created_at),
      score: e.health_score,
      status: e.status,
      version: e.version,
    }))
    .reverse();
  return (
    <>
      <HistoryChart points={points} thresholds={props.thresholds} />
      <p class="hint">
        {props.capped
          ? `The latest ${count(props.entries.length)} changes (the chart stops there).`
          : `${count(props.entries.length)} ${props.entries.length === 1 ? 'change' : 'changes'}. Shaded bands are today's thresholds; dots are coloured by the band each score had.`}
      </p>
      {props.entries.length > 0 && (
        <details open>
          <summary>Latest changes as a table: choose a version to see why it scored what it did</summary>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col" class="num">
                    Version
                  </th>
                  <th scope="col">When</th>
                  <th scope="col" class="num">
                    Score
                  </th>
                  <th scope="col" class="wide-only">
                    Status
                  </th>
                  <th scope="col" class="wide-only">
                    Why
                  </th>
                </tr>
              </thead>
              <tbody>
                {props.entries.slice(0, 20).map((e) => (
                  <tr
                    key={e.version}
                    class={e.version === props.selected ? 'pickable selected' : 'pickable'}
                    aria-current={e.version === props.selected ? 'true' : undefined}
                    onClick={(ev) => {
                      if (!(ev.target as Element).closest('button')) props.onSelect(e.version);
                    }}
                  >
                    <td class="num">
                      <button
                        type="button"
                        class="link"
                        aria-label={`Explain version ${e.version}`}
                        onClick={() => props.onSelect(e.version)}
                      >
                        {e.version}
                      </button>
                    </td>
                    <td>
                      {when(e.created_at)}
                      {/* On a phone the Why column gives way: the reason goes under the date. */}
                      <span class="sub phone-only">{REASON_LABEL[e.reason] ?? e.reason}</span>
                    </td>
                    <td class="num">{score(e.health_score)}</td>
                    <td class="wide-only">
                      <StatusBadge status={e.status} />
                    </td>
                    <td class="wide-only">{REASON_LABEL[e.reason] ?? e.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      )}
    </>
  );
}
