// The Calibration page (docs/scoring.md, "Does the score predict churn?"): every recorded outcome
// judged by the score its customer had some days before it. The AUC in words, the churn rate of
// each band, each factor's own AUC, and the weights fitted to the outcomes beside today's; for an
// admin, what applying them would change (the weights preview) and a button that applies them.
import { useState } from 'preact/hooks';
import {
  api,
  type Calibration,
  can,
  type Preview,
  query,
  request,
  type Segment,
  type Summary,
  segmentParams,
  type WeightsAnswer,
} from '../api.ts';
import { count, STATUS_LABEL } from '../format.ts';
import { BandsTable, ErrorMessage, Loading, Notice, Page, StatusBadge, useLoad } from '../ui.tsx';
import { SegmentPicker } from './portfolio-panels.tsx';

/** The horizons offered, in days; 90 unless chosen (docs/scoring.md, "Why the horizon matters"). */
const HORIZONS = [0, 30, 90, 180] as const;
const DEFAULT_HORIZON = 90;
/** Fewer outcomes of either kind than this, and the server suggests no weights (src/domain/calibration.ts). */
const MIN_FIT_OUTCOMES = 20;

const percent = (x: number) => `${Math.round(x * 100)}%`;
const aucNumber = (x: number) => x.toFixed(3);
/** A weight as a share a person reads (33.3%); the exact value goes in a title. */
const share = (w: number) => `${Math.round(w * 1000) / 10}%`;
const horizonLabel = (h: number) => (h === 0 ? 'on the day' : `${h} days before`);
const judgedBy = (h: number) =>
  h === 0 ? 'the score on the day of each outcome' : `the score ${h} days before each outcome`;
const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;

/** A factor's AUC in a word or two. */
function reading(auc: number | null): string {
  if (auc === null) return 'needs both kinds';
  if (auc < 0.45) return 'points the wrong way';
  if (auc < 0.55) return 'about a coin flip';
  if (auc < 0.7) return 'weak';
  if (auc < 0.8) return 'fair';
  return 'strong';
}

const sameWeights = (a: Record<string, number>, b: Record<string, number>) => {
  const names = Object.keys(a);
  return (
    names.length === Object.keys(b).length &&
    names.every((n) => b[n] !== undefined && Math.abs((a[n] as number) - (b[n] as number)) < 1e-9)
  );
};

export function CalibrationPage() {
  const [horizon, setHorizon] = useState<number>(DEFAULT_HORIZON);
  const [segment, setSegment] = useState<Segment | null>(null);
  // Applying the suggestion loads the report (and today's weights) again.
  const [round, setRound] = useState(0);
  const [applied, setApplied] = useState<string>();
  const seg = segment ? `${segment.key}=${segment.value}` : '';
  const loaded = useLoad(
    async (signal) => {
      const [report, weights] = await Promise.all([
        api.get<Calibration>(
          `/api/health-scores/calibration${query({ horizon_days: horizon, ...segmentParams(segment) })}`,
          signal,
        ),
        api.get<WeightsAnswer>('/api/settings/health-score/weights', signal),
      ]);
      return { report, weights: weights.weights };
    },
    [horizon, seg, round],
  );
  const data = loaded.data;
  const stale = loaded.loading ? ' stale' : '';
  return (
    <Page
      title="Calibration"
      subtitle="Does the score predict churn? Each recorded outcome is judged by the score its customer had before it."
    >
      <SegmentPicker
        segment={segment}
        onChange={(s) => {
          setSegment(s);
          setApplied(undefined);
        }}
      />
      <section aria-labelledby="ranking-title" class="card" aria-busy={loaded.loading}>
        <div class="section-head">
          <h2 id="ranking-title">How well the score ranks</h2>
          <div class="inline-field">
            <label for="horizon">Judge each outcome by the score</label>
            <select
              id="horizon"
              value={horizon}
              onChange={(e) => {
                setHorizon(Number(e.currentTarget.value));
                setApplied(undefined);
              }}
            >
              {HORIZONS.map((h) => (
                <option key={h} value={h}>
                  {horizonLabel(h)}
                </option>
              ))}
            </select>
          </div>
        </div>
        <ErrorMessage error={loaded.error} />
        {!data && !loaded.error && <Loading what="the calibration report" />}
        {data && (
          <div class={`calibration-body${stale}`}>
            <Ranking report={data.report} segment={segment} />
          </div>
        )}
      </section>
      {data && (
        <div class={`grid calibration-body${stale}`}>
          <BandsPanel report={data.report} />
          <FactorsPanel report={data.report} />
        </div>
      )}
      {data && (
        <Suggestion
          report={data.report}
          weights={data.weights}
          segment={segment}
          applied={applied}
          reloading={loaded.loading}
          onApplied={(message) => {
            setApplied(message);
            setRound((r) => r + 1);
          }}
        />
      )}
      <ReadingNote />
    </Page>
  );
}

/** The AUC in words, and the outcomes it counts. */
function Ranking({ report, segment }: { report: Calibration; segment: Segment | null }) {
  const { churned, retained, unscored } = report.outcomes;
  const h = report.horizon_days;
  return (
    <>
      {report.auc === null ? (
        <p class="auc-words" data-testid="auc-words">
          <strong>Needs at least one churned and one retained outcome</strong> judged by {judgedBy(h)}
          {segment ? ' in this segment' : ''}: there {churned + retained === 1 ? 'is' : 'are'}{' '}
          {plural(churned, 'churned outcome')} and {plural(retained, 'retained one')}.
        </p>
      ) : (
        <p class="auc-words" data-testid="auc-words">
          <strong>
            A retained customer outscored a churned one {percent(report.auc)} of the time, judged by{' '}
            {judgedBy(h)}.
          </strong>{' '}
          <span class="auc-aside">
            (AUC {aucNumber(report.auc)}: 0.5 is a coin flip, 1 a perfect ranking.)
          </span>
        </p>
      )}
      <ul class="cards outcome-counts" aria-label="Outcomes">
        <li class="card stat critical">
          <span class="label">Churned</span>
          <span class="value" data-testid="count-churned">
            {count(churned)}
          </span>
        </li>
        <li class="card stat healthy">
          <span class="label">Retained</span>
          <span class="value" data-testid="count-retained">
            {count(retained)}
          </span>
        </li>
        <li class="card stat">
          <span class="label">Unscored</span>
          <span class="value" data-testid="count-unscored">
            {count(unscored)}
          </span>
        </li>
      </ul>
      <p class="hint">
        Unscored: outcomes whose customer had no score yet {h === 0 ? 'on the day' : `${h} days before`}; they
        are left out of everything on this page.
        {unscored > 0 && h > 0 && ' A shorter horizon judges them by later scores.'}
      </p>
    </>
  );
}

/** Whether the churn rate climbs from healthy to critical, over the bands that held outcomes. */
function climbs(report: Calibration): boolean | null {
  const rates = report.bands.map((b) => b.churn_rate).filter((r): r is number => r !== null);
  if (rates.length < 2) return null;
  return (
    rates.every((r, i) => i === 0 || r >= (rates[i - 1] as number)) &&
    (rates.at(-1) as number) > (rates[0] as number)
  );
}

function BandsPanel({ report }: { report: Calibration }) {
  const verdict = climbs(report);
  return (
    <section aria-labelledby="bands-title" class="card">
      <h2 id="bands-title">Churn rate by band</h2>
      <ul class="band-bars">
        {report.bands.map((b) => (
          <li key={b.status} data-status={b.status}>
            <span class="name">
              <StatusBadge status={b.status} />
            </span>
            <span class="track" aria-hidden="true">
              <span class={`band-fill ${b.status}`} style={{ width: `${(b.churn_rate ?? 0) * 100}%` }} />
            </span>
            <span class="rate" data-testid={`churn-rate-${b.status}`}>
              {b.churn_rate === null ? '—' : percent(b.churn_rate)}
            </span>
            <span class="counts" data-testid={`churn-counts-${b.status}`}>
              {b.outcomes === 0
                ? 'no outcomes'
                : `${count(b.churned)} of ${plural(b.outcomes, 'outcome')} churned`}
            </span>
          </li>
        ))}
      </ul>
      <p class="hint">
        Each judged outcome in the band its score falls in under today's thresholds. A useful score's churn
        rate climbs from {STATUS_LABEL.healthy.toLowerCase()} to {STATUS_LABEL.critical.toLowerCase()}
        {verdict === null ? '.' : verdict ? ': here it does.' : ': here it does not.'}
      </p>
    </section>
  );
}

/** A bar from the coin flip (0.5, the middle) to the AUC: right and green above it, left and red below. */
function AucBar({ auc }: { auc: number | null }) {
  const from = auc === null ? 0.5 : Math.min(auc, 0.5);
  const to = auc === null ? 0.5 : Math.max(auc, 0.5);
  return (
    <span class="auc-bar" aria-hidden="true">
      <span
        class={`auc-fill ${auc !== null && auc < 0.5 ? 'wrong' : 'right'}`}
        style={{ left: `${from * 100}%`, width: `${(to - from) * 100}%` }}
      />
    </span>
  );
}

function FactorsPanel({ report }: { report: Calibration }) {
  return (
    <section aria-labelledby="factors-title" class="card">
      <h2 id="factors-title">Factors, best predictor first</h2>
      {report.factors.length === 0 ? (
        <p>No judged outcome had a factor yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="factor-aucs">
            <caption class="sr-only">Each factor's own AUC, best first</caption>
            <thead>
              <tr>
                <th scope="col">Factor</th>
                <th scope="col" class="num">
                  AUC
                </th>
                <th scope="col">Reading</th>
                <th scope="col" class="num wide-only">
                  Outcomes
                </th>
              </tr>
            </thead>
            <tbody>
              {report.factors.map((f) => (
                <tr key={f.factor} data-factor={f.factor}>
                  <th scope="row" class="mono factor-name">
                    {f.factor}
                  </th>
                  <td class="num">
                    <AucBar auc={f.auc} />
                    {f.auc === null ? '—' : aucNumber(f.auc)}
                  </td>
                  <td class={f.auc !== null && f.auc < 0.45 ? 'warn' : undefined}>
                    {reading(f.auc)}
                    <span class="sub phone-only">{plural(f.outcomes, 'outcome')}</span>
                  </td>
                  <td class="num wide-only">{count(f.outcomes)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="hint">
        Each factor's own AUC, over the outcomes whose score had it. 0.5 is a coin flip; below 0.5 the factor
        points the wrong way (its higher scores went with churn).
      </p>
    </section>
  );
}

function Suggestion(props: {
  report: Calibration;
  weights: Record<string, number>;
  segment: Segment | null;
  applied: string | undefined;
  /** The report is loading again (after a change of horizon or segment, or an apply). */
  reloading: boolean;
  onApplied: (message: string) => void;
}) {
  const { report, weights } = props;
  const admin = can('administer');
  const suggested = report.suggested_weights;
  const differs = suggested !== null && !sameWeights(suggested, weights);
  // What applying them would change: the weights preview, which only an admin may ask for.
  const json = differs ? JSON.stringify(suggested) : '';
  const preview = useLoad(
    async (signal) => {
      if (!admin || !differs) return undefined;
      const [answer, summary] = await Promise.all([
        request<Preview>(
          'POST',
          '/api/settings/health-score/weights/preview',
          { weights: suggested },
          { signal },
        ),
        api.get<Summary>('/api/health-scores/summary', signal),
      ]);
      return { answer, summary };
    },
    [json, admin],
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();

  const apply = async () => {
    if (!suggested) return;
    const moved = preview.data?.answer;
    const what = moved
      ? `: ${plural(moved.scores_changed, 'score')} change and ${plural(moved.band_changes, 'customer')} move band`
      : '';
    if (!confirm(`Apply the suggested weights? Every score is recomputed with them${what}.`)) return;
    setBusy(true);
    setError(undefined);
    try {
      await api.patch<WeightsAnswer>('/api/settings/health-score/weights', { weights: suggested });
      props.onApplied(
        moved
          ? `The suggested weights are applied. ${plural(moved.scores_changed, 'score was', 'scores were')} recomputed; ${plural(moved.band_changes, 'customer')} changed band.`
          : 'The suggested weights are applied. Every score has been recomputed.',
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="suggestion-title" class="card" data-testid="suggestion">
      <h2 id="suggestion-title">Suggested weights</h2>
      {props.applied && <Notice>{props.applied}</Notice>}
      {suggested === null ? (
        <WhyNoSuggestion report={report} segment={props.segment} />
      ) : (
        <>
          <p class="hint">
            Weights fitted to these outcomes: the factors that rank churned below retained count for more.
            {props.segment && ' They are fitted to this segment alone, but weights apply to every customer.'}
          </p>
          <WeightsCompare suggested={suggested} current={weights} />
          <dl class="auc-compare">
            <dt>{differs ? 'The suggested weights' : "Today's weights, over these outcomes"}</dt>
            <dd data-testid="suggested-auc">
              {report.suggested_auc === null
                ? '—'
                : `AUC ${aucNumber(report.suggested_auc)} (${percent(report.suggested_auc)})`}
            </dd>
            {differs && (
              <>
                <dt>Today's weights, over these outcomes</dt>
                <dd data-testid="current-weights-auc">
                  {report.current_weights_auc === null
                    ? '—'
                    : `AUC ${aucNumber(report.current_weights_auc)} (${percent(report.current_weights_auc)})`}
                </dd>
              </>
            )}
            <dt>The scores as they stood</dt>
            <dd data-testid="current-auc">
              {report.auc === null ? '—' : `AUC ${aucNumber(report.auc)} (${percent(report.auc)})`}
            </dd>
          </dl>
          {!differs ? (
            <p data-testid="nothing-to-apply">
              Today's weights rank these outcomes at least as well as weights fitted to them: there is nothing
              to apply.
            </p>
          ) : admin ? (
            <>
              <div class="preview" aria-live="polite">
                {preview.loading && !preview.data && <p class="loading">Working out what would change…</p>}
                <ErrorMessage error={preview.error} title="No preview:" />
                {preview.data && (
                  <div class="preview-box" data-testid="weights-preview">
                    <p>
                      <strong>Before you apply:</strong> of {count(preview.data.answer.customers)} customers
                      with a score, these weights would change{' '}
                      <strong data-testid="preview-scores-changed">
                        {count(preview.data.answer.scores_changed)}
                      </strong>{' '}
                      scores and move{' '}
                      <strong data-testid="preview-band-changes">
                        {count(preview.data.answer.band_changes)}
                      </strong>{' '}
                      {preview.data.answer.band_changes === 1 ? 'customer' : 'customers'} to another band.
                    </p>
                    <BandsTable
                      before={preview.data.summary.counts}
                      after={preview.data.answer.bands}
                      afterLabel="With the suggestion"
                    />
                  </div>
                )}
              </div>
              <ErrorMessage error={error} title="Not applied:" />
              <button type="button" onClick={apply} disabled={busy || props.reloading || !preview.data}>
                {busy ? 'Applying…' : 'Apply the suggested weights'}
              </button>
            </>
          ) : (
            <p class="hint" data-testid="admin-only">
              An admin can see what these weights would change and apply them, here or on the weights page.
            </p>
          )}
        </>
      )}
    </section>
  );
}

/** Why the server suggests no weights: too few outcomes of a kind, or no factor most outcomes had. */
function WhyNoSuggestion({ report, segment }: { report: Calibration; segment: Segment | null }) {
  const { churned, retained, unscored } = report.outcomes;
  const short = churned < MIN_FIT_OUTCOMES || retained < MIN_FIT_OUTCOMES;
  if (!short)
    return (
      <p data-testid="no-suggestion">
        No weights are suggested: no factor was present in at least half of the judged outcomes.
      </p>
    );
  const more = [
    churned < MIN_FIT_OUTCOMES ? `${count(MIN_FIT_OUTCOMES - churned)} more churned` : '',
    retained < MIN_FIT_OUTCOMES ? `${count(MIN_FIT_OUTCOMES - retained)} more retained` : '',
  ].filter(Boolean);
  return (
    <>
      <p data-testid="no-suggestion">
        No weights are suggested yet: fitting them needs at least {MIN_FIT_OUTCOMES} outcomes of each kind
        judged by a score, and {segment ? 'this segment has' : 'there are'} {count(churned)} churned and{' '}
        {count(retained)} retained ({more.join(' and ')} needed). With fewer, a fit follows chance rather than
        churn.
      </p>
      {unscored > 0 && report.horizon_days > 0 && (
        <p class="hint">
          {plural(unscored, 'outcome')} had no score {report.horizon_days} days before: a shorter horizon
          counts them.
        </p>
      )}
    </>
  );
}

/** Today's weights and the suggested ones, side by side, the suggestion's biggest first. */
function WeightsCompare({
  suggested,
  current,
}: {
  suggested: Record<string, number>;
  current: Record<string, number>;
}) {
  const names = [...new Set([...Object.keys(suggested), ...Object.keys(current)])].sort(
    (a, b) =>
      (suggested[b] ?? -1) - (suggested[a] ?? -1) ||
      (current[b] ?? -1) - (current[a] ?? -1) ||
      (a < b ? -1 : 1),
  );
  const none = Object.keys(current).length === 0;
  const cell = (w: number | undefined) =>
    w === undefined ? (
      <td class="num muted">—</td>
    ) : (
      <td class="num" title={`Weight ${w}`}>
        {share(w)}
      </td>
    );
  return (
    <>
      <div class="table-wrap">
        <table class="weights-compare">
          <caption class="sr-only">Today's weights and the suggested ones</caption>
          <thead>
            <tr>
              <th scope="col">Factor</th>
              <th scope="col" class="num">
                Today
              </th>
              <th scope="col" class="num">
                Suggested
              </th>
            </tr>
          </thead>
          <tbody>
            {names.map((n) => (
              <tr key={n} data-factor={n}>
                <th scope="row" class="mono factor-name">
                  {n}
                </th>
                {cell(current[n])}
                {cell(suggested[n])}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="hint">
        {none
          ? 'No weights are set today: every score is the plain mean of its factors. '
          : 'A factor without a weight does not count in the score. '}
        The suggestion weighs only the factors at least half of the judged outcomes had.
      </p>
    </>
  );
}

function ReadingNote() {
  return (
    <section aria-labelledby="reading-title" class="card">
      <h2 id="reading-title">How to read this without fooling yourself</h2>
      <ul class="reading">
        <li>
          <strong>The suggestion is fitted to these same outcomes</strong> (in-sample): on the next renewals
          it will do somewhat worse than its AUC here says.
        </li>
        <li>
          <strong>More outcomes, better.</strong> With a few dozen, read the suggestion as a hint about which
          factors matter; with hundreds, as a proposal.
        </li>
        <li>
          <strong>Judge the score you could have acted on.</strong> On the day of a renewal the score already
          knows; 90 days before is when a team could still act.
        </li>
        <li>
          <strong>Measure again</strong> after the next renewals, and record the renewals as well as the
          losses: churn alone has no AUC.
        </li>
      </ul>
      <p class="hint">
        Record outcomes on each customer's page, through the API (
        <code>POST /api/customers/{'{id}'}/outcomes</code>) or with <code>vitals import outcomes</code>. The
        method is in Vitals' docs/scoring.md, “Does the score predict churn?”; the routes are in the{' '}
        <a href="/docs">API docs</a>.
      </p>
    </section>
  );
}
