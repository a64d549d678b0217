// `vitals import metrics FILE --backfill` (docs/cli.md, "Backfill after an import"): once the
// points are in, a backfill (docs/api.md, "Backfill") from the earliest one's UTC day, so the trend,
// the movers and the calibration have the past at once; its progress read back until it is done or
// failed.
import { setTimeout as sleep } from 'node:timers/promises';
import { type Backfill, type VitalsClient, VitalsError } from '../client/index.ts';
import { BACKFILL_MAX_DAYS } from '../domain/backfill.ts';
import { dateOf, dayOf } from '../domain/portfolio.ts';
import type { BackfillCounts, BackfillProgress } from './progress.ts';

/** How often the run is read while it runs: its progress moves a customer at a time. */
export const POLL_MS = 500;

const number = (n: number) => n.toLocaleString('en-US');
const counts = (run: Backfill): BackfillCounts => ({
  done: run.customers_done,
  total: run.customers_total,
  versions: run.versions_written,
});

/** The first day to backfill: the earliest point's UTC day, but at most BACKFILL_MAX_DAYS back. */
export function backfillFrom(earliest: number, now: number): string {
  return dateOf(Math.max(dayOf(earliest), dayOf(now) - BACKFILL_MAX_DAYS));
}

/** Reads the run every `pollMs` until it is no longer running, telling `progress` each time; answers it ended. */
export async function followBackfill(
  client: VitalsClient,
  run: Backfill,
  progress: BackfillProgress,
  pollMs = POLL_MS,
): Promise<Backfill> {
  let current = run;
  try {
    progress.update(counts(current));
    while (current.status === 'running') {
      await sleep(pollMs);
      current = await client.healthScores.getBackfill(current.id);
      progress.update(counts(current));
    }
  } finally {
    progress.stop();
  }
  return current;
}

/** What is said once the run has ended, and the exit status: 1 when it failed, with the server's reason. */
export function backfillEnded(run: Backfill, seconds: number): { line: string; status: 0 | 1 } {
  if (run.status === 'failed') {
    return {
      line: `vitals import: the backfill ${run.id} failed after ${number(run.customers_done)} of ${number(run.customers_total)} customers: ${run.error ?? 'no reason given'}`,
      status: 1,
    };
  }
  return {
    line: `Backfilled ${number(run.customers_done)} customers from ${run.from}: ${number(run.versions_written)} versions written in ${seconds.toFixed(1)} s.`,
    status: 0,
  };
}

export interface AfterImportOptions {
  client: VitalsClient;
  /** The earliest instant of a point the import recorded (ms); undefined when none was. */
  earliest: number | undefined;
  now: number;
  /** The run's progress, made once it has started (after the import's own lines). */
  progress: () => BackfillProgress;
  /** Writes a line for the person running it (stderr). */
  say: (line: string) => void;
  pollMs?: number;
}

/**
 * The backfill after an import: started from the earliest point's day and followed to its end.
 * Answers the exit status: 0 done (or nothing to backfill), 1 failed or another run in the way.
 * Any other refusal is thrown, for `run` to say as it says every other (commands.ts).
 */
export async function backfillAfterImport(opts: AfterImportOptions): Promise<number> {
  const { client, earliest, now, say } = opts;
  if (earliest === undefined) {
    say('No metric point was imported: no backfill was started.');
    return 0;
  }
  // A backfill never writes today (docs/api.md, "Backfill"): points of today alone have no past.
  if (dayOf(earliest) >= dayOf(now)) {
    say(
      `The earliest point imported is of ${dateOf(dayOf(earliest))} (UTC): there is no past day to backfill.`,
    );
    return 0;
  }
  const from = backfillFrom(earliest, now);
  const why =
    from === dateOf(dayOf(earliest))
      ? "the earliest point's day"
      : `${BACKFILL_MAX_DAYS} days back, the furthest a backfill reaches; the earliest point is of ${dateOf(dayOf(earliest))}`;
  let run: Backfill;
  try {
    run = await client.healthScores.backfill({ from });
  } catch (error) {
    if (!(error instanceof VitalsError) || error.code !== 'backfill_running') throw error;
    say(
      `vitals import: no backfill was started (409 backfill_running): ${error.message} The metrics are imported; once that run is done, backfill from ${from} on the dashboard's Scoring page or with POST /api/health-scores/backfill {"from": "${from}"}.`,
    );
    return 1;
  }
  say(`Backfilling ${number(run.customers_total)} customers from ${from} (${why}): ${run.id}`);
  const started = performance.now();
  const ended = await followBackfill(client, run, opts.progress(), opts.pollMs);
  const { line, status } = backfillEnded(ended, (performance.now() - started) / 1000);
  say(line);
  return status;
}
