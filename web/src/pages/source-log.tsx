// A source's live log (docs/sources.md, "The log"): every message it received, newest first, with
// its result and the reason in words, read again every few seconds while its first page is open —
// the debugger a person watches while setting a tool up.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type Page as ListPage, query, type SourceLogEntry, sourcePath } from '../api.ts';
import { seconds, when } from '../format.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, Loading, Pager } from '../ui.tsx';

/** How often an open source page reads its counters and its log's first page again. */
export const POLL_MS = 3000;
const PAGE = 25;

/**
 * Runs `load` now, then again POLL_MS after each answer while `active` (never two at once). A failed
 * read keeps the last answer and is tried again at the next round.
 */
export function usePolled<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[], active = true) {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [readAt, setReadAt] = useState<number>();
  const [round, setRound] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    load(abort.signal)
      .then(
        (answer) => {
          if (abort.signal.aborted) return;
          setData(answer);
          setError(undefined);
          setReadAt(Date.now());
        },
        (err) => abort.signal.aborted || setError(err),
      )
      .finally(() => {
        if (!abort.signal.aborted && active) timer = setTimeout(() => setRound((r) => r + 1), POLL_MS);
      });
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, [...deps, round, active]);
  return { data, error, readAt, set: setData, reload: useCallback(() => setRound((r) => r + 1), []) };
}

export const RESULT_LABEL: Record<SourceLogEntry['result'], string> = {
  applied: 'Applied',
  ignored: 'Ignored',
  refused: 'Refused',
};

export function SourceLog({ sourceId }: { sourceId: string }) {
  const [afters, setAfters] = useState<(string | undefined)[]>([undefined]);
  const after = afters.at(-1);
  // Only the first page follows what arrives: an older page holds still while it is read.
  const log = usePolled(
    (signal) =>
      api.get<ListPage<SourceLogEntry>>(
        `${sourcePath(sourceId)}/log${query({ limit: PAGE, starting_after: after })}`,
        signal,
      ),
    [sourceId, after],
    after === undefined,
  );
  const entries = log.data?.data;
  return (
    <section aria-labelledby="log-title" class="card">
      <div class="section-head">
        <h2 id="log-title">Log</h2>
        <p class="hint live" data-testid="log-live">
          {after === undefined
            ? `Live: read every ${POLL_MS / 1000} s${log.readAt ? `, last at ${seconds(log.readAt)}` : ''}`
            : 'An older page: not followed live'}
        </p>
      </div>
      <p class="hint">
        The last 1,000 messages, newest first: what each did, and why when it was not applied.
      </p>
      <ErrorMessage error={log.error} title="The log could not be read:" />
      {!entries && !log.error && <Loading what="the log" />}
      {entries && entries.length === 0 && (
        <p>Nothing received yet. Messages show here within seconds of arriving.</p>
      )}
      {entries && entries.length > 0 && (
        <ol class="source-log" aria-label="Messages, newest first">
          {entries.map((e) => (
            <LogEntry key={e.id} entry={e} />
          ))}
        </ol>
      )}
      <Pager
        label="Pages of the log"
        page={afters.length}
        hasNext={log.data?.has_more ?? false}
        onPrevious={() => setAfters(afters.slice(0, -1))}
        onNext={() => setAfters([...afters, entries?.at(-1)?.id])}
      />
    </section>
  );
}

function LogEntry({ entry }: { entry: SourceLogEntry }) {
  return (
    <li class={`log-entry ${entry.result}`} data-testid="log-entry">
      <div class="log-head">
        <span class={`badge ${entry.result}`}>{RESULT_LABEL[entry.result]}</span>
        <span class="mono">{entry.kind}</span>
        {entry.customer_id === null ? (
          <span class="sub">no customer</span>
        ) : entry.result === 'refused' ? (
          // A refused message may name a customer that does not exist: no link to a missing page.
          <span class="mono break">{entry.customer_id}</span>
        ) : (
          <Link href={paths.customer(entry.customer_id)} class="mono break">
            {entry.customer_id}
          </Link>
        )}
        <time class="sub" dateTime={entry.received_at}>
          {when(entry.received_at)}
        </time>
      </div>
      {entry.reason && <p class="reason break">{entry.reason}</p>}
    </li>
  );
}
