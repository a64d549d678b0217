// "Backfill history" on the settings page (docs/dashboard.md; docs/api.md, "Backfill";
// docs/scoring.md, "Backfilling history"): an admin starts a backfill from a day, the card follows
// the run while it goes (its progress read every second) and says how it ended, and the account's
// last runs are listed. Everyone who may read the settings sees the runs; the start form is for
// those who may change the account (mayAdminister: not a viewer, not a read key).
//
// Nothing needs refreshing once a run ends: the portfolio's trend and drops and the calibration
// page ask the server again each time they are opened (useLoad), and the server keeps no cache.
import { useEffect, useState } from 'preact/hooks';
import { dateOf, dayOf } from '../../../src/domain/portfolio.ts';
import { ApiError, api, type Backfill } from '../api.ts';
import { count, utcDate, when } from '../format.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, Field, Loading, Notice, useFocusRefused, useLoad, useMayAdminister } from '../ui.tsx';

const RUNS = '/api/health-scores/backfill';
/**
 * How far back a backfill may start (docs/api.md, "Backfill"): src/domain/backfill.ts's, which the
 * page cannot import (its imports need Node), so the browser test checks the field against it.
 */
const BACKFILL_MAX_DAYS = 730;
/** How often a running backfill's progress is read again. */
const POLL_MS = 1000;
/** The default first day: a year back, what a first import usually holds. */
const DEFAULT_DAYS = 365;
/** The last runs listed (the API answers up to 20). */
const LISTED = 5;

const STATUS_WORDS: Record<Backfill['status'], string> = {
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
};

/** Reads a running run again every POLL_MS, giving each answer to `onRead`; a failed read is shown and tried again. */
function useFollow(run: Backfill | undefined, onRead: (run: Backfill) => void) {
  const [error, setError] = useState<unknown>();
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (run?.status !== 'running') return;
    const abort = new AbortController();
    const timer = setTimeout(() => {
      api.get<Backfill>(`${RUNS}/${encodeURIComponent(run.id)}`, abort.signal).then(
        (next) => {
          setError(undefined);
          onRead(next);
        },
        (err) => {
          if (abort.signal.aborted) return;
          setError(err);
          setAttempt((a) => a + 1);
        },
      );
    }, POLL_MS);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [run, attempt]);
  return error;
}

export function BackfillCard() {
  const may = useMayAdminister();
  const runs = useLoad((signal) => api.get<{ data: Backfill[] }>(RUNS, signal), []);
  // The run this card follows: the one it started, or the one a 409 said was running.
  const [followed, setFollowed] = useState<Backfill>();
  const [busy, setBusy] = useState<string>();
  const live = followed ?? runs.data?.data.find((r) => r.status === 'running');
  const pollError = useFollow(live, (next) => {
    setFollowed(next);
    if (next.status !== 'running') runs.reload();
  });

  return (
    <section aria-labelledby="backfill-title" class="card">
      <h2 id="backfill-title">Backfill history</h2>
      <p class="hint">
        Each customer’s score as of the end of every past day, from the metric points already kept and today’s
        factor rules and weights: the trend, the week’s drops and the calibration then have the past from the
        first day. Posted factors, past weights and overrides are not replayed, and no webhook or alert is
        sent.
      </p>
      {may && (
        <StartForm
          running={live?.status === 'running'}
          onStarted={(run) => {
            setBusy(undefined);
            setFollowed(run);
            runs.reload();
          }}
          onBusy={async (message) => {
            // Another run is going (started elsewhere, after this page loaded): it is the newest,
            // so follow that one, or show how it ended if it has ended since.
            setBusy(message);
            setFollowed(undefined);
            const list = await api.get<{ data: Backfill[] }>(RUNS).catch(() => undefined);
            if (list) {
              runs.set(list);
              setFollowed(list.data[0]);
            } else runs.reload();
          }}
        />
      )}
      {may === false && (
        <p class="hint" data-testid="backfill-admin-only">
          An admin (or a write key) starts a backfill; you see how each went.
        </p>
      )}
      {busy && (
        <p class="message warning" role="status">
          Not started: {busy} Its progress is below.
        </p>
      )}
      {live && <RunProgress run={live} />}
      <ErrorMessage error={pollError} title="Progress not read:" />
      <ErrorMessage error={runs.error} />
      {runs.loading && !runs.data && <Loading what="the backfills" />}
      {/* The followed run as last read, not as the list had it when it loaded. */}
      {runs.data && <RunList runs={runs.data.data.map((r) => (r.id === live?.id ? live : r))} />}
    </section>
  );
}

/** YYYY-MM-DD of the UTC day `days` before today. */
const daysBack = (days: number) => dateOf(dayOf(Date.now()) - days);

/** Why this first day cannot be sent, or undefined: the API's own bounds, and before today (today has no past). */
function fromProblem(from: string, first: string, last: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(from)) return 'Choose the first day to backfill.';
  if (from < first) return `At most ${BACKFILL_MAX_DAYS} days back: ${utcDate(first)} or later.`;
  if (from > last) return `A backfill fills the days before today: ${utcDate(last)} or earlier.`;
  return undefined;
}

function StartForm(props: {
  running: boolean;
  onStarted: (run: Backfill) => void;
  onBusy: (message: string) => Promise<void>;
}) {
  const [first, last] = [daysBack(BACKFILL_MAX_DAYS), daysBack(1)];
  const [from, setFrom] = useState(() => daysBack(DEFAULT_DAYS));
  const [refused, setRefused] = useState<unknown>();
  const [sending, setSending] = useState(false);
  useFocusRefused(refused, { from: 'backfill-from' });
  const problem = fromProblem(from, first, last);
  const refusedFrom = refused instanceof ApiError && refused.param === 'from' ? refused.message : undefined;
  const error = problem ?? refusedFrom;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (problem) return;
    setSending(true);
    setRefused(undefined);
    try {
      props.onStarted(await api.post<Backfill>(RUNS, { from }));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'backfill_running') await props.onBusy(err.message);
      else setRefused(err);
    } finally {
      setSending(false);
    }
  };
  return (
    <form onSubmit={submit} noValidate class="form backfill-form">
      <Field id="backfill-from" label="From (UTC day)" error={error}>
        <input
          id="backfill-from"
          type="date"
          min={first}
          max={last}
          value={from}
          onInput={(e) => {
            setFrom(e.currentTarget.value);
            setRefused(undefined);
          }}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'backfill-from-error backfill-from-hint' : 'backfill-from-hint'}
        />
        <p class="hint note" id="backfill-from-hint">
          Up to yesterday, at most {BACKFILL_MAX_DAYS} days back. A customer whose history already starts that
          day or before is passed over; a second run fills only the days before each history.
        </p>
      </Field>
      {!refusedFrom && <ErrorMessage error={refused} title="Not started:" />}
      <button type="submit" disabled={Boolean(problem) || sending || props.running}>
        {sending ? 'Starting…' : 'Backfill history'}
      </button>
      {props.running && <p class="hint">A backfill is running: an account runs one at a time.</p>}
    </form>
  );
}

/** The followed run: a bar of the customers done, its counts, and how it ended. */
function RunProgress({ run }: { run: Backfill }) {
  const total = run.customers_total;
  return (
    <div class="backfill-run" data-testid="backfill-run" data-status={run.status}>
      <div class="import-progress">
        <label for="backfill-progress">Customers backfilled</label>
        <progress
          id="backfill-progress"
          max={Math.max(total, 1)}
          value={total === 0 ? (run.status === 'running' ? 0 : 1) : run.customers_done}
        />
        <span class="hint" data-testid="backfill-counts">
          {count(run.customers_done)} of {count(total)} customers · {count(run.versions_written)}{' '}
          {run.versions_written === 1 ? 'version' : 'versions'} written
        </span>
      </div>
      <RunEnd run={run} />
    </div>
  );
}

function RunEnd({ run }: { run: Backfill }) {
  const from = utcDate(run.from);
  if (run.status === 'running') {
    return (
      <p class="hint" role="status">
        Backfilling from {from}, started {when(run.started_at)}. You may leave this page: the run goes on.
      </p>
    );
  }
  if (run.status === 'failed') {
    return (
      <div class="message error" role="alert">
        <strong>The backfill failed</strong> after {count(run.customers_done)} of {count(run.customers_total)}{' '}
        customers: {run.error ?? 'no reason was given.'}
      </div>
    );
  }
  return (
    <Notice>
      {run.versions_written === 0
        ? `Backfill done: nothing to write. Every customer’s history already starts on ${from} or before, or has no metric point to score then.`
        : `Backfill done: ${count(run.customers_done)} customers from ${from}, ${count(run.versions_written)} versions written. `}
      {run.versions_written > 0 && (
        <>
          See the year on the <Link href={paths.portfolio}>Portfolio</Link> (its trend and drops) and on{' '}
          <Link href={paths.calibration}>Calibration</Link>.
        </>
      )}
    </Notice>
  );
}

function RunList({ runs }: { runs: Backfill[] }) {
  if (runs.length === 0) return <p data-testid="backfill-none">No backfill has run yet.</p>;
  return (
    <div class="table-wrap">
      <table class="backfills">
        <caption>Last backfills</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">From</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Customers
            </th>
            <th scope="col" class="num wide-only">
              Versions
            </th>
          </tr>
        </thead>
        <tbody>
          {runs.slice(0, LISTED).map((r) => (
            <tr key={r.id}>
              <td>
                {when(r.started_at)}
                <span class="sub mono wide-only">{r.id}</span>
              </td>
              <td>{utcDate(r.from)}</td>
              <td>
                {STATUS_WORDS[r.status]}
                {r.error && <span class="sub">{r.error}</span>}
              </td>
              <td class="num">
                {count(r.customers_done)} of {count(r.customers_total)}
              </td>
              <td class="num wide-only">{count(r.versions_written)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
