import { useEffect, useState } from 'preact/hooks';
import type { Event } from 'vitals/client';
import {
  ApiError,
  api,
  type Delivery,
  type Page as ListPage,
  query,
  type Webhook,
  webhookPath,
} from '../api.ts';
import { when } from '../format.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, LiveNotice, Loading, Page, Pager, SecretReveal, useLoad } from '../ui.tsx';
import { ActionsCard, useWebhookActions } from './webhook-actions.tsx';
import { WebhookForm } from './webhooks.tsx';

export function WebhookPage({ id }: { id: string }) {
  const loaded = useLoad((signal) => api.get<Webhook>(webhookPath(id), signal), [id]);
  const actions = useWebhookActions(id, loaded);
  const { secret, setSecret, setNotice } = actions;

  if (loaded.error) {
    const missing = loaded.error instanceof ApiError && loaded.error.status === 404;
    return (
      <Page title={missing ? 'Webhook not found' : 'Webhook'}>
        <ErrorMessage error={loaded.error} />
        <p>
          <Link href={paths.webhooks}>Back to the webhooks</Link>
        </p>
      </Page>
    );
  }
  const webhook = loaded.data;
  if (!webhook) return <Loading what="the webhook" />;

  return (
    <Page title="Webhook" subtitle={<span class="break">{webhook.url}</span>}>
      <p>
        <Link href={paths.webhooks}>← All webhooks</Link>
      </p>
      {secret && (
        <div class="card">
          <SecretReveal secret={secret} onDismiss={() => setSecret(undefined)} />
        </div>
      )}
      <div class="grid">
        <section aria-labelledby="edit-title" class="card">
          <h2 id="edit-title">Settings</h2>
          <p class="hint">
            <span class="mono">{webhook.id}</span> · created {when(webhook.created_at)}
          </p>
          {webhook.disabled_reason && <p class="message error">{webhook.disabled_reason}</p>}
          <WebhookForm
            key={webhook.updated_at}
            initial={webhook}
            submitLabel="Save webhook"
            onSubmit={async (body) => {
              loaded.set({ ...webhook, ...(await api.patch<Webhook>(webhookPath(id), body)) });
              setNotice('Saved.');
            }}
          />
        </section>
        <ActionsCard webhook={webhook} actions={actions} />
      </div>
      <Deliveries webhookId={id} sent={actions.sent} />
    </Page>
  );
}

/**
 * Who a delivery is about, read from its event's data (docs/webhooks.md, "Event types and payloads"):
 * a customer, by name when the event has it (a customer's own events) and by id otherwise (a
 * score's); no customer (a test event); or unknown, once retention has removed the event.
 */
type Subject = { id: string; name?: string; deleted: boolean } | 'none' | 'gone';

/** An event never changes: each is read once while the dashboard is open, not at each look at the log. */
const subjectsRead = new Map<string, Subject>();

function subjectOf(event: Event): Subject {
  const data = event.data;
  const id =
    typeof data.customer_id === 'string' ? data.customer_id : typeof data.id === 'string' ? data.id : null;
  if (id === null || !event.type.startsWith('customer.')) return 'none';
  const name = typeof data.name === 'string' ? data.name : undefined;
  return { id, name, deleted: event.type === 'customer.deleted' };
}

function useSubjects(deliveries: Delivery[] | undefined): Map<string, Subject> {
  const [, setRead] = useState(0);
  useEffect(() => {
    const unread = [...new Set((deliveries ?? []).map((d) => d.event_id))].filter(
      (id) => !subjectsRead.has(id),
    );
    if (unread.length === 0) return;
    const controller = new AbortController();
    Promise.all(
      unread.map(async (id) => {
        try {
          subjectsRead.set(
            id,
            subjectOf(await api.get<Event>(`/api/events/${encodeURIComponent(id)}`, controller.signal)),
          );
        } catch (err) {
          if (err instanceof ApiError && err.status === 404) subjectsRead.set(id, 'gone');
        }
      }),
    ).then(() => {
      if (!controller.signal.aborted) setRead((n) => n + 1);
    });
    return () => controller.abort();
  }, [deliveries]);
  return subjectsRead;
}

function About({ subject }: { subject: Subject | undefined }) {
  if (subject === undefined) return <span class="sub">…</span>;
  if (subject === 'none') return <span data-testid="delivery-customer">a test event, about no customer</span>;
  if (subject === 'gone') return <span data-testid="delivery-customer">its event is no longer kept</span>;
  const words = subject.name === undefined ? subject.id : `${subject.name} (${subject.id})`;
  return (
    <span data-testid="delivery-customer">
      about {subject.deleted ? `${words} (deleted)` : <Link href={paths.customer(subject.id)}>{words}</Link>}
    </span>
  );
}

const FILTERS = ['', 'pending', 'succeeded', 'failed'] as const;
/** After a test event is sent, the log looks again this often until its delivery has an outcome… */
const FOLLOW_MS = 500;
/** …at most this many times (then, while it is pending, every two seconds as for any delivery). */
const FOLLOW_LOOKS = 20;

function Deliveries({ webhookId, sent }: { webhookId: string; sent: Delivery | undefined }) {
  const [status, setStatus] = useState<(typeof FILTERS)[number]>('');
  const [afters, setAfters] = useState<(string | undefined)[]>([undefined]);
  const after = afters.at(-1);
  const list = useLoad(
    (signal) =>
      api.get<ListPage<Delivery>>(
        `${webhookPath(webhookId)}/deliveries${query({ status, limit: 20, starting_after: after })}`,
        signal,
      ),
    [webhookId, status, after],
  );
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string>();
  const subjects = useSubjects(list.data?.data);

  // A test event was just sent: show the whole log from its first page, where its delivery is on
  // top, and follow that delivery until it has an outcome.
  const [follow, setFollow] = useState<{ id: string; looks: number }>();
  useEffect(() => {
    if (!sent) return;
    setStatus('');
    setAfters([undefined]);
    setNotice(undefined);
    setFollow({ id: sent.id, looks: 0 });
    list.reload();
  }, [sent, list.reload]);
  const followed = follow && list.data?.data.find((d) => d.id === follow.id);
  const following =
    follow !== undefined && follow.looks < FOLLOW_LOOKS && (!followed || followed.status === 'pending');
  useEffect(() => {
    if (!following || list.loading) return;
    const timer = setTimeout(() => {
      setFollow((f) => f && { ...f, looks: f.looks + 1 });
      list.reload();
    }, FOLLOW_MS);
    return () => clearTimeout(timer);
  }, [following, list.loading, list.reload]);
  // Its outcome, told to screen readers too (the log itself is no live region).
  const outcome = followed && followed.status !== 'pending' ? followed.status : undefined;
  useEffect(() => {
    if (!follow || !outcome) return;
    setNotice(`Test delivery ${follow.id} ${outcome}.`);
    setFollow(undefined);
  }, [follow, outcome]);

  // While a delivery is pending, look again every two seconds.
  const pending = list.data?.data.some((d) => d.status === 'pending') ?? false;
  useEffect(() => {
    if (!pending || following) return;
    const timer = setInterval(list.reload, 2000);
    return () => clearInterval(timer);
  }, [pending, following, list.reload]);

  const retry = async (d: Delivery) => {
    setError(undefined);
    setNotice(undefined);
    try {
      await api.post<Delivery>(`${webhookPath(webhookId)}/deliveries/${encodeURIComponent(d.id)}/retry`);
      setNotice(`Delivery ${d.id} is queued to be sent again.`);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section aria-labelledby="deliveries-title" class="card">
      <div class="section-head">
        <h2 id="deliveries-title">Delivery log</h2>
        <div class="inline-field">
          <label for="delivery-status">Status</label>
          <select
            id="delivery-status"
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value as (typeof FILTERS)[number]);
              setAfters([undefined]);
            }}
          >
            {FILTERS.map((f) => (
              <option key={f} value={f}>
                {f === '' ? 'All' : f}
              </option>
            ))}
          </select>
          <button type="button" class="secondary" onClick={list.reload}>
            Refresh
          </button>
        </div>
      </div>
      <ErrorMessage error={list.error ?? error} />
      <LiveNotice notice={notice} />
      {list.loading && !list.data && <Loading what="deliveries" />}
      {list.data && list.data.data.length === 0 && (
        <p>
          No deliveries{status ? ` that are ${status}` : ''} yet. They appear when a subscribed event happens.
        </p>
      )}
      {list.data && list.data.data.length > 0 && (
        <ul class="deliveries">
          {list.data.data.map((d) => (
            <li key={d.id} class="delivery">
              <div class="delivery-head">
                <span class="mono">{d.event_type}</span>
                <About subject={subjects.get(d.event_id)} />
                <span class={`badge ${d.status}`}>{d.status}</span>
                <span class="sub">
                  {d.attempt_count} {d.attempt_count === 1 ? 'attempt' : 'attempts'} · {when(d.created_at)}
                  {d.next_attempt_at && ` · next ${when(d.next_attempt_at)}`}
                </span>
                <button type="button" class="secondary small" onClick={() => retry(d)}>
                  Retry<span class="sr-only"> delivery {d.id}</span>
                </button>
              </div>
              <details>
                <summary>
                  <span class="mono">{d.id}</span> · event <span class="mono">{d.event_id}</span>
                </summary>
                {d.attempts.length === 0 ? (
                  <p class="hint">Not attempted yet.</p>
                ) : (
                  <ol class="attempts">
                    {d.attempts.map((a) => (
                      <li key={a.attempt}>
                        <strong>#{a.attempt}</strong> {when(a.started_at)} · {a.duration_ms} ms ·{' '}
                        {a.status_code !== null ? `HTTP ${a.status_code}` : 'no answer'}
                        {a.error && <span class="warn"> · {a.error}</span>}
                        {a.response_body && <pre>{a.response_body}</pre>}
                      </li>
                    ))}
                  </ol>
                )}
              </details>
            </li>
          ))}
        </ul>
      )}
      <Pager
        label="Pages of deliveries"
        page={afters.length}
        hasNext={list.data?.has_more ?? false}
        busy={list.loading}
        onPrevious={() => setAfters(afters.slice(0, -1))}
        onNext={() => setAfters([...afters, list.data?.data.at(-1)?.id])}
      />
    </section>
  );
}
