// "Why this score" on the customer page (docs/scoring.md, "Why this score"; docs/dashboard.md,
// "Customer page"): a version of the score explained by the server, each factor's contribution
// (weight × score) as a bar, and what moved in words: since the version before, or since what
// stood 7 or 30 days ago or on a day (the API's `since`). The history's rows choose the version
// shown; the period is the page's `since` query parameter, so it survives a reload and Back.
import type { Ref } from 'preact';
import { api, customerPath, type ExplainedFactor, type Explanation, query } from '../api.ts';
import { count, date, REASON_LABEL, score, signed, when } from '../format.ts';
import { navigate, paths, useSearch } from '../router.tsx';
import { aggregateWords, cappedWords, plain } from '../rules.ts';
import { ErrorMessage, Loading, PinnedBadge, StatusBadge, useLoad } from '../ui.tsx';

/** Contributions are rounded to 6 places each: a pin is told from rounding by more than this. */
const SAME = 1e-5;
const DAY_MS = 86_400_000;

/**
 * What "What changed" compares with, as the URL keeps it: '' the version before (the default),
 * '7d' and '30d' what stood that many days ago (counted back from each load, so a bookmark stays
 * "the last 7 days"), or a day YYYY-MM-DD: what stood at its start, in the browser's time zone.
 */
type Period = '' | '7d' | '30d' | `${number}-${number}-${number}`;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const RELATIVE = { '7d': 7, '30d': 30 } as const;

const ymd = (d: Date) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;

/** The start of a day YYYY-MM-DD in the browser's time zone; null unless it is a day that exists. */
function startOf(day: string): number | null {
  const m = DAY.exec(day);
  if (!m) return null;
  const at = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return ymd(at) === day ? at.getTime() : null;
}

/** The period a query string names; anything else is the default. */
function periodOf(search: string): Period {
  const value = new URLSearchParams(search).get('since') ?? '';
  if (value === '7d' || value === '30d') return value;
  // A day to come has nothing to compare yet: the default, as for anything else.
  const start = startOf(value);
  return start === null || start > Date.now() ? '' : (value as Period);
}

/** The instant a period starts at, as of `now`; null for the version before. */
function startOfPeriod(period: Period, now: number): number | null {
  if (period === '') return null;
  if (period === '7d' || period === '30d') return now - RELATIVE[period] * DAY_MS;
  return startOf(period);
}

/** "in the last 7 days", "since Mar 1, 2026" */
function during(period: Period, at: number): string {
  return period === '7d' || period === '30d' ? `in the last ${RELATIVE[period]} days` : `since ${date(at)}`;
}

/** "more than 7 days ago", "before Mar 1, 2026" */
function madeBefore(period: Period, at: number): string {
  return period === '7d' || period === '30d'
    ? `more than ${RELATIVE[period]} days ago`
    : `before ${date(at)}`;
}

/** What the explanation compared with: the period and the instant it started at when loaded. */
interface Compared {
  period: Period;
  at: number;
}

export function WhyPanel(props: {
  customerId: string;
  /** The version to explain; null: the current one. */
  version: number | null;
  /** A new round loads the explanation again (an override set or removed makes a version). */
  round: number;
  onCurrent: () => void;
  headingRef: Ref<HTMLHeadingElement>;
}) {
  const { customerId, version } = props;
  const period = periodOf(useSearch());
  const loaded = useLoad(
    async (signal) => {
      const at = startOfPeriod(period, Date.now());
      const since = at === null ? undefined : new Date(at).toISOString();
      const explanation = await api.get<Explanation>(
        `${customerPath(customerId)}/health-score/explanation${query({ version, since })}`,
        signal,
      );
      return { explanation, compared: at === null ? null : { period, at } };
    },
    [customerId, version, props.round, period],
  );
  // While the next version loads, the one before stays (dimmed), so the page does not jump.
  const e = loaded.data?.explanation;
  const compare = (next: Period) => navigate(`${paths.customer(customerId)}${query({ since: next })}`);
  return (
    <section
      aria-labelledby="why-title"
      class="card why"
      data-testid="why-panel"
      data-version={e?.version}
      aria-busy={loaded.loading}
    >
      <div class="section-head">
        <h2 id="why-title" tabIndex={-1} ref={props.headingRef} aria-describedby="why-version">
          Why this score
        </h2>
        {version !== null && (
          <button type="button" class="secondary small" onClick={props.onCurrent}>
            Back to the current score
          </button>
        )}
      </div>
      <ErrorMessage error={loaded.error} />
      {loaded.loading && !e && <Loading what="the explanation" />}
      {e && (
        <div class={loaded.loading ? 'why-body stale' : 'why-body'}>
          <p
            id="why-version"
            class={version === null ? 'version-line' : 'version-line older'}
            data-testid="why-version"
          >
            {version === null ? (
              <>The current score, version {e.version}</>
            ) : (
              <>
                <strong>An earlier score:</strong> version {e.version}, not the current one
              </>
            )}
            {` · ${when(e.updated_at)} · ${REASON_LABEL[e.reason] ?? e.reason}`}
          </p>
          {/* The current score is in the card above; an earlier one is said here. */}
          {version !== null && (
            <p class="why-score">
              <span class="value">{score(e.health_score)}</span>
              <StatusBadge status={e.status} />
              {e.override && <PinnedBadge override={e.override} computed={false} />}
            </p>
          )}
          {e.override && (
            <p class="pinned-words">
              Pinned by a person at {score(e.override.health_score)} (until {date(e.override.expires_at)}):
              the factors below compute <strong>{score(e.computed_score)}</strong>.
            </p>
          )}
          <GateWords explanation={e} />
          <h3 id="why-factors-title">What each factor adds</h3>
          <Contributions explanation={e} />
          <div class="section-head change-head">
            <h3 id="why-change-title">What changed</h3>
            <PeriodPicker period={period} onPeriod={compare} />
          </div>
          <ChangeWords explanation={e} compared={loaded.data?.compared ?? null} current={version === null} />
        </div>
      )}
    </section>
  );
}

/** Which gates held this version's status down (docs/scoring.md, "Gates"); nothing when none did. */
function GateWords({ explanation: e }: { explanation: Explanation }) {
  const applied = e.factors.filter((f) => f.gate?.applied);
  if (applied.length === 0) return null;
  return (
    <p class="gated-note" data-testid="why-gates">
      {applied.map((f) => (f.gate ? cappedWords(f.factor, f.gate, f.score) : f.factor)).join('; ')}: the
      status is at most that, whatever the score.
    </p>
  );
}

const percent = (weight: number) => `${Math.round(weight * 1000) / 10}%`;

/** "logins, sum over 30 days = 10 (2 points, the newest on Mar 30)" */
function metricWords(metric: NonNullable<ExplainedFactor['metric']>): string {
  const words = `${metric.name}, ${aggregateWords(metric)} = ${plain(metric.value)}`;
  // A `last` rule reads one point, the newest: its date is all there is to say of it.
  if (metric.aggregate === 'last') {
    return metric.newest_at === null ? words : `${words} (recorded on ${date(metric.newest_at)})`;
  }
  const points = `${count(metric.points)} ${metric.points === 1 ? 'point' : 'points'}`;
  const newest = metric.newest_at === null ? '' : `, the newest on ${date(metric.newest_at)}`;
  return `${words} (${points}${newest})`;
}

/**
 * A bar per factor on one scale from 0 to 1: filled, what it adds (weight × score); pale, the most
 * it could add (its weight). The fills laid end to end make the computed score.
 */
function Contributions({ explanation: e }: { explanation: Explanation }) {
  if (e.factors.length === 0) return <p>This version has no factors.</p>;
  const plainMean = e.factors.every((f) => Math.abs(f.weight - 1 / e.factors.length) < SAME);
  return (
    <>
      <ul class="contributions" aria-labelledby="why-factors-title">
        {e.factors.map((f) => (
          <li key={f.factor} data-factor={f.factor}>
            <span class="name">
              <span class="mono">{f.factor}</span>{' '}
              <span
                class={`tag ${f.source === 'metric' ? 'derived' : 'posted'}`}
                title={
                  f.source === 'metric' ? 'Derived from a metric by a factor rule' : 'Posted through the API'
                }
              >
                {f.source === 'metric' ? 'derived' : 'posted'}
              </span>
            </span>
            <span class="bar" aria-hidden="true">
              <span class="reach" style={{ width: `${f.weight * 100}%` }} />
              <span class="fill" style={{ width: `${f.contribution * 100}%` }} />
            </span>
            <span class="amount" data-testid={`contribution-${f.factor}`}>
              {score(f.contribution)}
            </span>
            <span class="how">
              {f.weight === 0
                ? `scores ${score(f.score)}, but has no weight: it adds nothing`
                : `scores ${score(f.score)} × weight ${percent(f.weight)}`}
              {f.metric && (
                <>
                  {' '}
                  <span class="from">from {metricWords(f.metric)}</span>
                </>
              )}
            </span>
          </li>
        ))}
      </ul>
      <p class="hint">
        Each bar runs from 0 to 1: the dark part is what the factor adds to the score (its score × its
        weight), the pale part the most it could add.{' '}
        {plainMean
          ? 'No weight covers these factors, so each counts the same.'
          : 'Weights are rescaled over the weighted factors present.'}{' '}
        Together they make the computed score, <strong>{score(e.computed_score)}</strong>.
      </p>
    </>
  );
}

/**
 * What "What changed" compares with: the version before, what stood 7 or 30 days ago, or at the
 * start of a day. Choosing "A day…" starts at the first of this month ("why did it drop this
 * month?"); the day's field then changes it.
 */
function PeriodPicker({ period, onPeriod }: { period: Period; onPeriod: (w: Period) => void }) {
  const day = DAY.test(period);
  const today = ymd(new Date());
  return (
    <div class="period-picker">
      <div class="inline-field">
        <label for="why-since">Compared with</label>
        <select
          id="why-since"
          value={day ? 'day' : period}
          onChange={(ev) => {
            const chosen = ev.currentTarget.value;
            onPeriod(chosen === 'day' ? (`${today.slice(0, 8)}01` as Period) : (chosen as Period));
          }}
        >
          <option value="">The version before</option>
          <option value="7d">7 days ago</option>
          <option value="30d">30 days ago</option>
          <option value="day">A day…</option>
        </select>
      </div>
      {day && (
        <div class="inline-field">
          <label for="why-since-day">Since the start of</label>
          <input
            id="why-since-day"
            type="date"
            max={today}
            value={period}
            onChange={(ev) => {
              const value = ev.currentTarget.value;
              if (startOf(value) !== null) onPeriod(value as Period);
            }}
          />
        </div>
      )}
    </div>
  );
}

/**
 * What moved, in words: the score shown, the computed one under a pin, each contribution; since
 * the version before, or since what stood when `compared` began (the API's `since`).
 */
function ChangeWords({
  explanation: e,
  compared,
  current,
}: {
  explanation: Explanation;
  compared: Compared | null;
  current: boolean;
}) {
  const change = e.change;
  if (!change)
    return <p data-testid="why-change">Version {e.version} is the first score: nothing came before it.</p>;
  if (compared && change.from_version === e.version) {
    const words = during(compared.period, compared.at);
    // Compared with itself: the version already stood when the period began, or it is the first.
    const older = Date.parse(e.updated_at) <= compared.at;
    return (
      <p data-testid="why-change">
        {!older
          ? `Version ${e.version} is the first score, made ${words}: nothing came before it.`
          : current
            ? `No new version ${words}: version ${e.version} stood throughout.`
            : `Version ${e.version} was made ${madeBefore(compared.period, compared.at)}: nothing ${words} led to it.`}
      </p>
    );
  }
  const reason = REASON_LABEL[e.reason] ?? e.reason;
  // The span compared: since the version before (and why this version came), or over the period.
  const span = compared
    ? `${during(compared.period, compared.at)}, from version ${change.from_version} to version ${e.version}`
    : `since version ${change.from_version} (${reason})`;
  const previousComputed = change.previous_computed_score;
  const moved = e.computed_score - previousComputed;
  const pinnedBefore = Math.abs(change.previous_score - previousComputed) > SAME;
  const pinnedNow = e.override !== null;
  const computedMoved = Math.abs(moved) > SAME;
  const present = new Set(e.factors.map((f) => f.factor));
  return (
    <>
      <p class="change-summary" data-testid="why-change">
        {Math.abs(change.delta) < SAME ? (
          <>
            Score unchanged at <strong>{score(e.health_score)}</strong> {span}.
          </>
        ) : (
          <>
            Score{' '}
            <strong>
              {score(change.previous_score)} → {score(e.health_score)}
            </strong>{' '}
            ({signed(change.delta)}) {span}.
          </>
        )}
      </p>
      {(pinnedBefore || pinnedNow) && (
        <p data-testid="why-pin-change">
          {computedMoved ? (
            <>
              Underneath, the factors' score went {score(previousComputed)} → {score(e.computed_score)} (
              {signed(moved)});{' '}
              {pinnedNow
                ? `the score shown ${pinnedBefore ? 'stays' : 'is'} pinned at ${score(e.health_score)}.`
                : 'the score shown is theirs again: no override stands.'}
            </>
          ) : (
            <>
              The factors give {score(e.computed_score)} as before:{' '}
              {pinnedNow
                ? `a person pinned the score shown at ${score(e.health_score)}.`
                : 'the override no longer stands, so the score shown is theirs again.'}
            </>
          )}
        </p>
      )}
      {change.factors.length === 0 ? (
        <p class="hint">No factor's contribution moved.</p>
      ) : (
        <ul class="moves" aria-labelledby="why-change-title">
          {change.factors.map((f) => (
            <li key={f.factor} data-factor={f.factor} class={f.delta < 0 ? 'down' : 'up'}>
              <span class="mono">{f.factor}</span>'s contribution {f.delta < 0 ? 'fell' : 'rose'} from{' '}
              {score(f.previous_contribution)} to {score(f.contribution)} ({signed(f.delta)})
              {!present.has(f.factor) && ': it left the score'}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
