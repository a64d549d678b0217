// Connecting a source (docs/sources.md): its type, its name, and what each type needs — a Segment
// key's trust, Stripe's signing secret, a webhook's mapping and how its deliveries authenticate.
// A refusal is shown at the field its `param` names, in the API's words (docs/dashboard.md).
import { useState } from 'preact/hooks';
import { ApiError, api, type SourceCreate, type SourceCreated } from '../api.ts';
import { ErrorMessage, Field, useFocusRefused } from '../ui.tsx';
import {
  type Draft,
  type MappingField,
  SegmentFields,
  StripeFields,
  WebhookFields,
} from './source-fields.tsx';

const TYPES = [
  {
    type: 'segment',
    label: 'Segment',
    hint: 'Segment’s libraries, RudderStack or Jitsu, pointed at Vitals.',
  },
  {
    type: 'stripe',
    label: 'Stripe',
    hint: 'Subscriptions, ARR, renewals and invoices from Stripe’s webhooks.',
  },
  {
    type: 'webhook',
    label: 'Webhook',
    hint: 'Any tool that posts JSON (Zendesk, Intercom, HubSpot…), mapped by you.',
  },
] as const;

const SIGNING_SECRET = /^whsec_[A-Za-z0-9+/=]{8,200}$/;
const HEADER = /^[A-Za-z0-9-]{1,100}$/;

const EMPTY: Draft = {
  type: 'segment',
  name: '',
  trusted: false,
  signingSecret: '',
  mapping: { customer_id: '', at: '', metrics: '', counts: '', customer: '' },
  auth: 'token',
  header: '',
  encoding: 'hex',
  prefix: '',
  secret: '',
};

/** What the form would send, or the problem of each field this page can see (by the API's param). */
function check(d: Draft): Record<string, string> {
  const problems: Record<string, string> = {};
  if (d.name.trim() === '') problems.name = 'Give the source a name, such as “Backend” or “Zendesk”.';
  if (d.type === 'stripe' && !SIGNING_SECRET.test(d.signingSecret.trim()))
    problems.signing_secret = 'Paste the endpoint’s signing secret as Stripe shows it: whsec_ and the rest.';
  if (d.type === 'webhook') {
    if (d.mapping.customer_id.trim() === '')
      problems['mapping.customer_id'] = 'Say where the customer’s id is, such as body.account.id.';
    if (d.auth === 'signature' && !HEADER.test(d.header.trim()))
      problems['signature.header'] =
        'The header’s name: letters, digits and dashes, such as X-Hub-Signature-256.';
    if (d.auth === 'signature' && d.secret !== '' && d.secret.length < 16)
      problems['signature.secret'] = 'At least 16 characters, or leave it empty for Vitals to make one.';
  }
  return problems;
}

function bodyOf(d: Draft): SourceCreate {
  const name = d.name.trim();
  if (d.type === 'segment') return { type: 'segment', name, trusted: d.trusted };
  if (d.type === 'stripe') return { type: 'stripe', name, signing_secret: d.signingSecret.trim() };
  const mapping = Object.fromEntries(
    Object.entries(d.mapping).filter(([, v]) => v.trim() !== ''),
  ) as SourceCreate['mapping'];
  if (d.auth === 'token') return { type: 'webhook', name, mapping };
  const signature: NonNullable<SourceCreate['signature']> = { header: d.header.trim(), encoding: d.encoding };
  if (d.prefix !== '') signature.prefix = d.prefix;
  if (d.secret !== '') signature.secret = d.secret;
  return { type: 'webhook', name, mapping, signature };
}

/** Each param the API may name → the id of its control. */
const FIELDS: Record<string, string> = {
  name: 'src-name',
  signing_secret: 'src-signing-secret',
  'signature.header': 'src-sig-header',
  'signature.secret': 'src-sig-secret',
  'signature.prefix': 'src-sig-prefix',
  ...Object.fromEntries(
    (['customer_id', 'at', 'metrics', 'counts', 'customer'] satisfies MappingField[]).map((f) => [
      `mapping.${f}`,
      `src-mapping-${f}`,
    ]),
  ),
};

export function CreateSourceForm({ onCreated }: { onCreated: (source: SourceCreated) => void }) {
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [touched, setTouched] = useState(false);
  const [refused, setRefused] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  useFocusRefused(refused, FIELDS);
  const problems = check(draft);
  /** The message for a field: this page's check once submitted, else the API's refusal naming it. */
  const errorOf = (param: string) =>
    (touched ? problems[param] : undefined) ??
    (refused instanceof ApiError && refused.param === param ? refused.message : undefined);
  const change = (patch: Partial<Draft>) => {
    setDraft({ ...draft, ...patch });
    setRefused(undefined);
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    const first = Object.keys(problems)[0];
    if (first) {
      document.getElementById(FIELDS[first] ?? '')?.focus();
      return;
    }
    setBusy(true);
    setRefused(undefined);
    try {
      onCreated(await api.post<SourceCreated>('/api/sources', bodyOf(draft)));
      setDraft({ ...EMPTY, type: draft.type });
      setTouched(false);
    } catch (err) {
      setRefused(err);
    } finally {
      setBusy(false);
    }
  };

  const nameError = errorOf('name');
  const fields = { draft, change, errorOf };
  return (
    <form onSubmit={submit} noValidate class="form source-form">
      <fieldset class="field type-choice">
        <legend>Type</legend>
        {TYPES.map((t) => (
          <label key={t.type} class="check">
            <input
              class="check-input"
              type="radio"
              name="source-type"
              value={t.type}
              checked={draft.type === t.type}
              onChange={() => change({ type: t.type })}
            />
            <span>
              <strong>{t.label}</strong> <span class="hint">{t.hint}</span>
            </span>
          </label>
        ))}
      </fieldset>
      <Field id="src-name" label="Name" error={nameError}>
        <input
          id="src-name"
          value={draft.name}
          maxLength={100}
          placeholder={draft.type === 'segment' ? 'Backend' : draft.type === 'stripe' ? 'Stripe' : 'Zendesk'}
          onInput={(e) => change({ name: e.currentTarget.value })}
          aria-invalid={nameError ? true : undefined}
          aria-describedby={nameError ? 'src-name-error' : undefined}
        />
      </Field>
      {draft.type === 'segment' && <SegmentFields {...fields} />}
      {draft.type === 'stripe' && <StripeFields {...fields} />}
      {draft.type === 'webhook' && <WebhookFields {...fields} />}
      <ErrorMessage error={refused} title="Not created:" />
      <button type="submit" disabled={busy}>
        {busy ? 'Connecting…' : 'Create source'}
      </button>
    </form>
  );
}
