// The fields of each source type in the connect form (source-create.tsx; docs/sources.md).
import type { ComponentChildren } from 'preact';
import { Field } from '../ui.tsx';

export type MappingField = 'customer_id' | 'at' | 'metrics' | 'counts' | 'customer';

/** The connect form as typed; source-create.tsx checks it and makes the API's body of it. */
export interface Draft {
  type: 'segment' | 'stripe' | 'webhook';
  name: string;
  trusted: boolean;
  signingSecret: string;
  mapping: Record<MappingField, string>;
  auth: 'token' | 'signature';
  header: string;
  encoding: 'hex' | 'base64';
  prefix: string;
  secret: string;
}

export interface FieldsProps {
  draft: Draft;
  change: (patch: Partial<Draft>) => void;
  /** The message to show at the field the API's param names, if any. */
  errorOf: (param: string) => string | undefined;
}

/** A text control (an input, or a textarea for an expression) in a Field, with a hint below it. */
function TextField(props: {
  id: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
  error: string | undefined;
  hint?: ComponentChildren;
  placeholder?: string;
  multiline?: boolean;
  mono?: boolean;
}) {
  const described = [props.error && `${props.id}-error`, props.hint && `${props.id}-hint`].filter(Boolean);
  const control = {
    id: props.id,
    value: props.value,
    placeholder: props.placeholder,
    spellcheck: false,
    class: props.mono ? 'mono' : undefined,
    'aria-invalid': props.error ? true : undefined,
    'aria-describedby': described.length > 0 ? described.join(' ') : undefined,
  };
  return (
    <Field id={props.id} label={props.label} error={props.error}>
      {props.multiline ? (
        <textarea {...control} rows={2} onInput={(e) => props.onValue(e.currentTarget.value)} />
      ) : (
        <input {...control} onInput={(e) => props.onValue(e.currentTarget.value)} />
      )}
      {props.hint && (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      )}
    </Field>
  );
}

export function SegmentFields({ draft, change }: FieldsProps) {
  return (
    <div class="field">
      <label class="check">
        <input
          class="check-input"
          type="checkbox"
          checked={draft.trusted}
          aria-describedby="src-trusted-hint"
          onChange={(e) => change({ trusted: e.currentTarget.checked })}
        />
        Trusted: a server-side key, which may create customers and set their name, email, owner, ARR and
        renewal
      </label>
      <p class="message warning" id="src-trusted-hint">
        Leave it off for a key used in a browser or an app: anyone can read a key there.
      </p>
    </div>
  );
}

export function StripeFields({ draft, change, errorOf }: FieldsProps) {
  return (
    <TextField
      id="src-signing-secret"
      label="Signing secret"
      value={draft.signingSecret}
      onValue={(signingSecret) => change({ signingSecret })}
      error={errorOf('signing_secret')}
      placeholder="whsec_…"
      mono
      hint="The endpoint’s secret, from Stripe’s Developers › Webhooks. Vitals keeps it and never shows it again."
    />
  );
}

/** A Zendesk ticket webhook's mapping (docs/sources.md, "Connect Zendesk"), as the placeholders. */
const MAPPING: { field: MappingField; label: string; example: string; hint: string }[] = [
  {
    field: 'customer_id',
    label: 'Customer id',
    example: 'body.detail.organization_id',
    hint: 'Required: the Vitals customer the delivery is about.',
  },
  {
    field: 'at',
    label: 'When (optional)',
    example: 'body.time',
    hint: 'ISO 8601; default: when it arrives.',
  },
  {
    field: 'metrics',
    label: 'Metrics (optional)',
    example: "{'open_tickets': body.detail.open_ticket_count}",
    hint: 'Name → number: a point of each metric.',
  },
  {
    field: 'counts',
    label: 'Counts (optional)',
    example: "body.type = 'zen:event-type:ticket.created' ? {'zendesk_tickets_opened': 1}",
    hint: 'Name → number: added to the day’s point, as a Segment track counts.',
  },
  {
    field: 'customer',
    label: 'Customer fields (optional)',
    example: "{'metadata': {'support_plan': body.detail.plan}}",
    hint: 'Merged into the customer, as PATCH /api/customers/{id} merges.',
  },
];

export function WebhookFields(props: FieldsProps) {
  const { draft, change, errorOf } = props;
  return (
    <>
      <fieldset class="field mapping">
        <legend>Mapping</legend>
        <p class="hint">
          JSONata expressions over <code>{'{body, headers}'}</code> of each delivery. The examples count a
          Zendesk organization’s new tickets.
        </p>
        {MAPPING.map((m) => (
          <TextField
            key={m.field}
            id={`src-mapping-${m.field}`}
            label={m.label}
            value={draft.mapping[m.field]}
            onValue={(value) => change({ mapping: { ...draft.mapping, [m.field]: value } })}
            error={errorOf(`mapping.${m.field}`)}
            placeholder={m.example}
            hint={m.hint}
            multiline
            mono
          />
        ))}
      </fieldset>
      <AuthFields {...props} />
    </>
  );
}

function AuthFields({ draft, change, errorOf }: FieldsProps) {
  return (
    <fieldset class="field">
      <legend>Authentication</legend>
      <label class="check">
        <input
          type="radio"
          name="src-auth"
          checked={draft.auth === 'token'}
          onChange={() => change({ auth: 'token' })}
        />
        A secret token in the URL (Zendesk, Intercom, HubSpot)
      </label>
      <label class="check">
        <input
          type="radio"
          name="src-auth"
          checked={draft.auth === 'signature'}
          onChange={() => change({ auth: 'signature' })}
        />
        An HMAC-SHA256 signature of the body in a header (GitHub, Shopify, Typeform)
      </label>
      {draft.auth === 'signature' && (
        <div class="signature-fields">
          <TextField
            id="src-sig-header"
            label="Header"
            value={draft.header}
            onValue={(header) => change({ header })}
            error={errorOf('signature.header')}
            placeholder="X-Hub-Signature-256"
            mono
          />
          <Field id="src-sig-encoding" label="Encoding">
            <select
              id="src-sig-encoding"
              value={draft.encoding}
              onChange={(e) => change({ encoding: e.currentTarget.value as Draft['encoding'] })}
            >
              <option value="hex">hex</option>
              <option value="base64">base64</option>
            </select>
          </Field>
          <TextField
            id="src-sig-prefix"
            label="Prefix (optional)"
            value={draft.prefix}
            onValue={(prefix) => change({ prefix })}
            error={errorOf('signature.prefix')}
            placeholder="sha256="
            mono
          />
          <TextField
            id="src-sig-secret"
            label="Secret (optional)"
            value={draft.secret}
            onValue={(secret) => change({ secret })}
            error={errorOf('signature.secret')}
            hint="The tool’s secret; leave it empty and Vitals makes one, shown once."
            mono
          />
        </div>
      )}
    </fieldset>
  );
}
