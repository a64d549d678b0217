// What an import or export tells the person running it while it runs: a cli-progress bar on a
// terminal (rows, rows/s, ETA), and a plain line every few seconds otherwise (a log, CI).
import cliProgress from 'cli-progress';

export interface Counts {
  /** Rows (or records) done: answered by the server, or refused before sending. */
  rows: number;
  refused: number;
  /** Bytes of the input read so far (imports), for the ETA. */
  bytes?: number;
}

export interface Progress {
  update(counts: Counts): void;
  stop(): void;
}

const PLAIN_EVERY_MS = 5_000;

const number = (n: number) => Math.round(n).toLocaleString('en-US');

function eta(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  if (seconds < 90) return `${Math.ceil(seconds)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/**
 * `total`: the input's size in bytes, when known (a file; not stdin): the bar and the ETA go by
 * the share of it read. `stream`: where it is drawn (stderr: stdout may be the export itself).
 * `refusals`: whether rows can be refused (an import); an export shows no count of them.
 */
export function progress(
  label: string,
  stream: NodeJS.WriteStream,
  total: number | undefined,
  refusals = true,
): Progress {
  const started = performance.now();
  const rate = (rows: number) => rows / Math.max((performance.now() - started) / 1000, 0.001);
  const left = (c: Counts) => {
    if (!total || !c.bytes) return Number.NaN;
    const elapsed = (performance.now() - started) / 1000;
    return (elapsed * (total - c.bytes)) / c.bytes;
  };
  if (stream.isTTY) return barProgress(label, stream, total, rate, left, refusals);
  let last = started;
  return {
    update(c) {
      const now = performance.now();
      if (now - last < PLAIN_EVERY_MS) return;
      last = now;
      const share =
        total && c.bytes ? { percent: Math.floor((100 * c.bytes) / total), eta: left(c) } : undefined;
      stream.write(plainLine(label, c, rate(c.rows), refusals, share));
    },
    stop() {},
  };
}

/** The line written every few seconds where there is no terminal to draw a bar on. */
export function plainLine(
  label: string,
  c: Counts,
  rowsPerSecond: number,
  refusals: boolean,
  share?: { percent: number; eta: number },
): string {
  const refused = refusals ? ` (${number(c.refused)} refused)` : '';
  const of = share ? `, ${share.percent}% of the file, ETA ${eta(share.eta)}` : '';
  return `${label}: ${number(c.rows)} rows${refused}, ${number(rowsPerSecond)} rows/s${of}\n`;
}

function barProgress(
  label: string,
  stream: NodeJS.WriteStream,
  total: number | undefined,
  rate: (rows: number) => number,
  left: (c: Counts) => number,
  refusals: boolean,
): Progress {
  const refused = refusals ? ' | {refused} refused' : '';
  const format = total
    ? `${label} [{bar}] {percentage}% | {rows} rows${refused} | {rate} rows/s | ETA {left}`
    : `${label} {rows} rows${refused} | {rate} rows/s`;
  const bar = new cliProgress.SingleBar(
    { format, stream, fps: 5, hideCursor: true, clearOnComplete: false, etaBuffer: 50 },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total ?? 1, 0, { rows: '0', refused: '0', rate: '0', left: '?' });
  return {
    update(c) {
      bar.update(total ? Math.min(c.bytes ?? 0, total) : 0, {
        rows: number(c.rows),
        refused: number(c.refused),
        rate: number(rate(c.rows)),
        left: eta(left(c)),
      });
    },
    stop() {
      if (total) bar.update(total);
      bar.stop();
    },
  };
}

/** A backfill's progress (`vitals import metrics FILE --backfill`): customers done of its total, versions written. */
export interface BackfillCounts {
  done: number;
  total: number;
  versions: number;
}

export interface BackfillProgress {
  update(counts: BackfillCounts): void;
  stop(): void;
}

/**
 * The backfill's own bar, drawn after the import's as the import's is (a bar on a terminal, a plain
 * line every few seconds otherwise); it goes by customers, the unit the server counts.
 */
export function backfillProgress(stream: NodeJS.WriteStream): BackfillProgress {
  if (!stream.isTTY) {
    let last = performance.now();
    return {
      update(c) {
        const now = performance.now();
        if (now - last < PLAIN_EVERY_MS) return;
        last = now;
        stream.write(backfillLine(c));
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      format: 'backfill [{bar}] {percentage}% | {done} of {of} customers | {versions} versions | ETA {left}',
      stream,
      fps: 5,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 20,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  const since = performance.now();
  // By the customers done so far (cli-progress's own ETA reads "NFs" before the first).
  const left = (c: BackfillCounts) =>
    c.done === 0 ? Number.NaN : ((performance.now() - since) / 1000) * ((c.total - c.done) / c.done);
  return {
    update(c) {
      const payload = {
        done: number(c.done),
        of: number(c.total),
        versions: number(c.versions),
        left: eta(left(c)),
      };
      // An account without customers has a total of 0: a bar of 1 then, full once done.
      const total = Math.max(c.total, 1);
      if (!started) {
        bar.start(total, 0, payload);
        started = true;
      }
      bar.setTotal(total);
      bar.update(c.total === 0 ? 1 : c.done, payload);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

/** The backfill's line written every few seconds where there is no terminal to draw a bar on. */
export function backfillLine(c: BackfillCounts): string {
  const percent = c.total === 0 ? 100 : Math.floor((100 * c.done) / c.total);
  return `backfill: ${number(c.done)} of ${number(c.total)} customers (${percent}%), ${number(c.versions)} versions\n`;
}
