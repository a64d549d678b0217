import { useState } from 'preact/hooks';
import { api, EVENT_TYPES, type Webhook } from '../api.ts';
import { when } from '../format.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, Field, Loading, Page, SecretReveal, useLoad } from '../ui.tsx';

export function WebhooksPage() {
  const list = useLoad((signal) => api.get<{ webhooks: Webhook[] }>('/api/webhooks', signal), []);
  const [created, setCreated] = useState<Webhook>();
  return (
    <Page title="Webhooks">
      {created?.secret && (
        <div class="card">
          <p>
            Webhook <Link href={paths.webhook(created.id)}>{created.url}</Link> is created.
          </p>
          <SecretReveal secret={created.secret} onDismiss={() => setCreated(undefined)} />
        </div>
      )}
      <section aria-labelledby="list-title" class="card">
        <h2 id="list-title">Endpoints</h2>
        <ErrorMessage error={list.error} />
        {list.loading && !list.data && <Loading what="webhooks" />}
        {list.data && list.data.webhooks.length === 0 && <p>No webhooks yet. Add one below.</p>}
        {list.data && list.data.webhooks.length > 0 && (
          <ul class="webhook-list">
            {list.data.webhooks.map((w) => (
              <li key={w.id}>
                <div>
                  <Link href={paths.webhook(w.id)} class="break">
                    {w.url}
                  </Link>
                  <span class={`badge ${w.enabled ? 'healthy' : 'off'}`}>
                    {w.enabled ? 'Enabled' : 'Disabled'}
                  </span>
                </div>
                {w.description && <p class="sub">{w.description}</p>}
                <p class="sub">
                  {w.events.join(', ')} · created {when(w.created_at)}
                </p>
                {w.disabled_reason && <p class="sub warn">{w.disabled_reason}</p>}
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="create-title" class="card">
        <h2 id="create-title">Add a webhook</h2>
        <WebhookForm
          submitLabel="Create webhook"
          onSubmit={async (body) => {
            const webhook = await api.post<Webhook>('/api/webhooks', body);
            setCreated(webhook);
            list.reload();
            window.scrollTo({ top: 0 });
          }}
        />
      </section>
    </Page>
  );
}

export interface WebhookBody {
  url: string;
  events: string[];
  description?: string | null;
  enabled?: boolean;
}

function checkUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'Enter an absolute URL, such as https://example.com/hooks/vitals.';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return 'The URL must start with http:// or https://.';
  if (parsed.username || parsed.password) return 'The URL must not hold a user name or password.';
  if (url.length > 2048) return 'The URL is at most 2048 characters.';
}

/** Create and edit share this form: url, events, description (and enabled when editing). */
export function WebhookForm(props: {
  initial?: Webhook;
  submitLabel: string;
  onSubmit: (body: WebhookBody) => Promise<void>;
}) {
  const init = props.initial;
  const [url, setUrl] = useState(init?.url ?? '');
  const [events, setEvents] = useState<string[]>(init?.events ?? ['customer.status.changed']);
  const [description, setDescription] = useState(init?.description ?? '');
  const [enabled, setEnabled] = useState(init?.enabled ?? true);
  const [touched, setTouched] = useState(false);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const urlError = checkUrl(url.trim());
  const eventsError = events.length === 0 ? 'Choose at least one event.' : undefined;
  const descriptionError = description.length > 1024 ? 'At most 1024 characters.' : undefined;
  const show = (m: string | undefined) => (touched ? m : undefined);
  const prefix = init ? 'edit' : 'new';

  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (urlError || eventsError || descriptionError) return;
    setBusy(true);
    setError(undefined);
    const body: WebhookBody = { url: url.trim(), events };
    if (init) {
      body.description = description === '' ? null : description;
      body.enabled = enabled;
    } else if (description !== '') body.description = description;
    try {
      await props.onSubmit(body);
      if (!init) {
        setUrl('');
        setDescription('');
        setTouched(false);
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const changed = () => setError(undefined);

  return (
    <form onSubmit={submit} noValidate class="form">
      <Field id={`${prefix}-url`} label="Endpoint URL" error={show(urlError)}>
        <input
          id={`${prefix}-url`}
          type="url"
          value={url}
          placeholder="https://example.com/hooks/vitals"
          maxLength={2048}
          spellcheck={false}
          onInput={(e) => {
            setUrl(e.currentTarget.value);
            changed();
          }}
          aria-invalid={show(urlError) ? true : undefined}
          aria-describedby={show(urlError) ? `${prefix}-url-error` : undefined}
        />
      </Field>
      <fieldset class={`field${show(eventsError) ? ' invalid' : ''}`}>
        <legend>Events</legend>
        {EVENT_TYPES.map((t) => (
          <label key={t} class="check">
            <input
              type="checkbox"
              checked={events.includes(t)}
              onChange={(e) => {
                setEvents(e.currentTarget.checked ? [...events, t] : events.filter((x) => x !== t));
                changed();
              }}
            />
            <span class="mono">{t}</span>
          </label>
        ))}
        {show(eventsError) && <p class="field-error">{eventsError}</p>}
      </fieldset>
      <Field id={`${prefix}-description`} label="Description (optional)" error={show(descriptionError)}>
        <input
          id={`${prefix}-description`}
          value={description}
          maxLength={1024}
          onInput={(e) => {
            setDescription(e.currentTarget.value);
            changed();
          }}
        />
      </Field>
      {init && (
        <label class="check">
          <input
            type="checkbox"
            checked={enabled}
            onChange={(e) => {
              setEnabled(e.currentTarget.checked);
              changed();
            }}
          />
          Enabled (send deliveries)
        </label>
      )}
      <ErrorMessage error={error} title="Not saved:" />
      <button type="submit" disabled={busy}>
        {busy ? 'Saving…' : props.submitLabel}
      </button>
    </form>
  );
}
