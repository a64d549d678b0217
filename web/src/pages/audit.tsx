// The audit log, for admins (docs/people.md, "Audit log"): who changed what, newest first.
import { useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { when } from '../format.ts';
import { ErrorMessage, Loading, Page, Pager, useLoad } from '../ui.tsx';

interface Entry {
  id: string;
  actor: { type: 'key' | 'user'; id: string; label: string };
  action: string;
  object_id: string | null;
  at: string;
  request_id: string;
}

const PAGE = 25;

export function AuditPage() {
  const [afters, setAfters] = useState<(string | undefined)[]>([undefined]);
  const after = afters.at(-1);
  const page = useLoad(
    (signal) =>
      api.get<{ data: Entry[]; has_more: boolean }>(
        `/api/audit-log${query({ limit: PAGE, starting_after: after })}`,
        signal,
      ),
    [after],
  );
  const rows = page.data?.data;
  return (
    <Page title="Audit log">
      <section class="card" aria-labelledby="audit-title">
        <h2 id="audit-title">Who changed what</h2>
        <ErrorMessage error={page.error} />
        {page.loading && !rows && <Loading what="the audit log" />}
        {rows && rows.length === 0 && <p>No changes recorded yet.</p>}
        {rows && rows.length > 0 && (
          // biome-ignore lint/a11y/noNoninteractiveTabindex: wider than a phone, the region scrolls, and a scrolling region must be reachable by keyboard (axe: scrollable-region-focusable)
          <section class="table-wrap" tabIndex={0} aria-label="Audit log entries">
            <table class="audit" aria-busy={page.loading}>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">What</th>
                  <th scope="col">Object</th>
                  <th scope="col" class="wide-only">
                    Request
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((e) => (
                  <tr key={e.id}>
                    <td>{when(e.at)}</td>
                    <td>
                      {e.actor.label}
                      <span class="sub">{e.actor.type === 'key' ? 'API key' : 'person'}</span>
                    </td>
                    <td>
                      <code>{e.action}</code>
                    </td>
                    <td>{e.object_id ?? '—'}</td>
                    <td class="wide-only">
                      <code>{e.request_id}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        )}
        <Pager
          label="Pages of the audit log"
          page={afters.length}
          hasNext={page.data?.has_more === true}
          busy={page.loading}
          onPrevious={() => setAfters(afters.slice(0, -1))}
          onNext={() => rows && setAfters([...afters, rows.at(-1)?.id])}
        />
      </section>
    </Page>
  );
}
