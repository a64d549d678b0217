// Which source last touched a customer (docs/dashboard.md, "Customer"; docs/sources.md, "In the
// dashboard"): the newest message that changed it, and its latest messages from any source with
// their results, from GET /api/customers/{id}/source-activity. Nothing shows for a customer no
// source has named.
import { api, customerPath, type SourceActivity } from '../api.ts';
import { when } from '../format.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, useLoad } from '../ui.tsx';
import { RESULT_LABEL } from './source-log.tsx';

export function SourceTouch({ customerId }: { customerId: string }) {
  const activity = useLoad(
    (signal) => api.get<SourceActivity>(`${customerPath(customerId)}/source-activity`, signal),
    [customerId],
  );
  if (activity.error) return <ErrorMessage error={activity.error} title="Source activity not read:" />;
  const found = activity.data;
  if (!found || (found.data.length === 0 && !found.last_applied)) return null;
  const last = found.last_applied;
  return (
    <div class="source-touch">
      <p data-testid="source-touch">
        {last ? (
          <>
            Last touched by source: <Link href={paths.source(last.source_id)}>{last.source_name}</Link> ·{' '}
            {when(last.received_at)}
          </>
        ) : (
          'Sources have sent messages about this customer, but none changed it.'
        )}
      </p>
      {found.data.length > 0 && (
        <details>
          <summary>Its latest source messages</summary>
          <ol class="source-log compact">
            {found.data.map((e) => (
              <li key={e.id} class={`log-entry ${e.result}`}>
                <div class="log-head">
                  <span class={`badge ${e.result}`}>{RESULT_LABEL[e.result]}</span>
                  <span class="mono">{e.kind}</span>
                  <Link href={paths.source(e.source_id)}>{e.source_name}</Link>
                  <time class="sub" dateTime={e.received_at}>
                    {when(e.received_at)}
                  </time>
                </div>
                {e.reason && <p class="reason break">{e.reason}</p>}
              </li>
            ))}
          </ol>
        </details>
      )}
    </div>
  );
}
