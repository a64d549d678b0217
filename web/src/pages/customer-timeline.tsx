// The customer's timeline (docs/dashboard.md, "Customer"; docs/api.md, "Timeline"): the account's story
// newest first, in the API's own sentences (which name who did each thing), and when. A filter narrows it to
// one kind of story (the score, the work, the book, the sources); older entries come a page at a
// time. It reads again when this tab changes the customer's tasks or notes, so what one just did is
// on top.
import { useEffect, useState } from 'preact/hooks';
import { api, customerPath, query, type TimelineEntry, type TimelineType } from '../api.ts';
import { when } from '../format.ts';
import { ErrorMessage, Loading, useLoad } from '../ui.tsx';
import { NOTES_CHANGED } from './customer-notes.tsx';
import { TASKS_CHANGED } from './tasks.tsx';

const PAGE = 20;

type Timeline = { data: TimelineEntry[]; has_more: boolean };

/** The filter's choices: the types each shows (none: every type). */
const KINDS: Record<string, { label: string; types: TimelineType[] }> = {
  all: { label: 'Everything', types: [] },
  score: {
    label: 'The score',
    types: [
      'score_changed',
      'status_changed',
      'score_dropped',
      'override_set',
      'override_removed',
      'override_expired',
    ],
  },
  work: { label: 'Tasks and notes', types: ['task_created', 'task_done', 'note'] },
  book: { label: 'The book and outcomes', types: ['customer_updated', 'outcome'] },
  sources: { label: 'Sources', types: ['source_event'] },
};

/** A word for the entry's kind, shown before its sentence. */
const TYPE_LABEL: Record<TimelineType, string> = {
  score_changed: 'Score',
  status_changed: 'Status',
  score_dropped: 'Drop',
  override_set: 'Override',
  override_removed: 'Override',
  override_expired: 'Override',
  outcome: 'Outcome',
  note: 'Note',
  task_created: 'Task',
  task_done: 'Task',
  customer_updated: 'Book',
  source_event: 'Source',
};

export function TimelineCard({ customerId }: { customerId: string }) {
  const [kind, setKind] = useState('all');
  const [round, setRound] = useState(0);
  const types = KINDS[kind]?.types ?? [];
  const page = (after?: string, signal?: AbortSignal) =>
    api.get<Timeline>(
      `${customerPath(customerId)}/timeline${query({
        limit: PAGE,
        types: types.length > 0 ? types.join(',') : undefined,
        starting_after: after,
      })}`,
      signal,
    );
  const first = useLoad((signal) => page(undefined, signal), [customerId, kind, round]);
  const [older, setOlder] = useState<Timeline>({ data: [], has_more: false });
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [error, setError] = useState<unknown>();

  // A new first page (another filter, a change made in this tab) starts the list again.
  useEffect(() => setOlder({ data: [], has_more: false }), [customerId, kind, round]);
  useEffect(() => {
    const again = () => setRound((r) => r + 1);
    window.addEventListener(TASKS_CHANGED, again);
    window.addEventListener(NOTES_CHANGED, again);
    return () => {
      window.removeEventListener(TASKS_CHANGED, again);
      window.removeEventListener(NOTES_CHANGED, again);
    };
  }, []);

  const entries = first.data ? [...first.data.data, ...older.data] : undefined;
  const hasMore = older.data.length > 0 ? older.has_more : first.data?.has_more === true;
  const showOlder = async () => {
    setLoadingOlder(true);
    setError(undefined);
    try {
      const next = await page(entries?.at(-1)?.id);
      setOlder({ data: [...older.data, ...next.data], has_more: next.has_more });
    } catch (err) {
      setError(err);
    } finally {
      setLoadingOlder(false);
    }
  };

  return (
    <section aria-labelledby="timeline-title" class="card" data-testid="customer-timeline">
      <h2 id="timeline-title">Timeline</h2>
      <div class="inline-field timeline-filter">
        <label for="timeline-kind">Show</label>
        <select id="timeline-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
          {Object.entries(KINDS).map(([value, k]) => (
            <option key={value} value={value}>
              {k.label}
            </option>
          ))}
        </select>
      </div>
      <ErrorMessage error={first.error ?? error} />
      {first.loading && !entries && <Loading what="the timeline" />}
      {entries && entries.length === 0 && <p data-testid="no-timeline">Nothing here yet.</p>}
      {entries && entries.length > 0 && (
        <ol class="timeline" aria-label="The customer's story, newest first" aria-busy={first.loading}>
          {entries.map((e) => (
            <li key={e.id} class={`timeline-entry timeline-${e.type}`} data-type={e.type}>
              <span class="timeline-kind">{TYPE_LABEL[e.type]}</span>
              <div class="timeline-text">
                <p class="timeline-summary">{e.summary}</p>
                <p class="timeline-meta">
                  <time dateTime={e.at}>{when(e.at)}</time>
                </p>
              </div>
            </li>
          ))}
        </ol>
      )}
      {hasMore && (
        <button type="button" class="secondary small" onClick={showOlder} disabled={loadingOlder}>
          {loadingOlder ? 'Loading…' : 'Show older'}
        </button>
      )}
    </section>
  );
}
