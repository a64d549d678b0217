// A customer's book (docs/api.md, "Customers"): who owns it, what it is worth, when it renews,
// whether it is still a customer, and where it sits in its account hierarchy — shown on the
// customer page, and edited with the rest of the customer (customer-edit.tsx).
import { api, type Customer, query, STATUSES, type Status } from '../api.ts';
import { count, date, money, STATUS_LABEL, score } from '../format.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, Field, Loading, NumberField, StatusBadge, useLoad } from '../ui.tsx';

const DAY = 86_400_000;

/** "in 12 days", "today", "3 days ago": how far a renewal is, for a person. */
export function fromToday(iso: string, now = Date.now()): string {
  const days = Math.round((Date.parse(iso) - now) / DAY);
  if (days === 0) return 'today';
  if (days > 0) return `in ${count(days)} day${days === 1 ? '' : 's'}`;
  return `${count(-days)} day${days === -1 ? '' : 's'} ago`;
}

/** Marks a customer that has churned; nothing for an active one. */
export function ChurnedBadge({ customer }: { customer: Pick<Customer, 'lifecycle'> }) {
  return customer.lifecycle === 'churned' ? <span class="badge churned">Churned</span> : null;
}

/** The book's facts as a definition list. */
export function BookDetails({ customer }: { customer: Customer }) {
  return (
    <dl class="details">
      <dt>Owner</dt>
      <dd class="break">{customer.owner ?? <span class="hint">No owner</span>}</dd>
      <dt>ARR</dt>
      <dd>{customer.arr === null ? <span class="hint">Not set</span> : money(customer.arr)}</dd>
      <dt>Renewal</dt>
      <dd>
        {customer.renewal_at === null ? (
          <span class="hint">Not set</span>
        ) : (
          `${date(customer.renewal_at)} (${fromToday(customer.renewal_at)})`
        )}
      </dd>
      <dt>Lifecycle</dt>
      <dd>{customer.lifecycle === 'churned' ? <ChurnedBadge customer={customer} /> : 'Active'}</dd>
      <dt>Parent</dt>
      <dd>
        {customer.parent_id === null ? (
          <span class="hint">None</span>
        ) : (
          <Link href={paths.customer(customer.parent_id)} class="mono">
            {customer.parent_id}
          </Link>
        )}
      </dd>
    </dl>
  );
}

interface Rollup {
  customer_id: string;
  descendants: number;
  arr: number;
  health_score: number | null;
  status: Status | null;
  counts: Record<Status, number>;
}

/**
 * The customer's children (direct, first 50) and its rollup over every descendant: ARR summed, the
 * ARR-weighted score and its band, and how many of them are in each band. Shown only when the
 * customer has children.
 */
export function HierarchyCard({ customerId }: { customerId: string }) {
  const loaded = useLoad(
    async (signal) => {
      const [children, rollup] = await Promise.all([
        api.get<{ customers: Customer[]; has_more: boolean }>(
          `/api/customers${query({ parent_id: customerId, limit: 50 })}`,
          signal,
        ),
        api.get<Rollup>(`/api/customers/${encodeURIComponent(customerId)}/rollup`, signal),
      ]);
      return { children, rollup };
    },
    [customerId],
  );
  if (loaded.error) return <ErrorMessage error={loaded.error} />;
  if (!loaded.data) return loaded.loading ? <Loading what="the account hierarchy" /> : null;
  const { children, rollup } = loaded.data;
  if (children.customers.length === 0) return null;
  return (
    <section aria-labelledby="hierarchy-title" class="card">
      <h2 id="hierarchy-title">Accounts under this one</h2>
      <dl class="details">
        <dt>Accounts below</dt>
        <dd>{count(rollup.descendants)}</dd>
        <dt>ARR, all of them</dt>
        <dd>{money(rollup.arr)}</dd>
        <dt>Score, weighted by ARR</dt>
        <dd>
          {rollup.health_score === null || rollup.status === null ? (
            <span class="hint">None of them has a score</span>
          ) : (
            <>
              {score(rollup.health_score)} <StatusBadge status={rollup.status} />
            </>
          )}
        </dd>
        <dt>By band</dt>
        <dd>
          {STATUSES.map((s) => `${count(rollup.counts[s])} ${STATUS_LABEL[s].toLowerCase()}`).join(' · ')}
        </dd>
      </dl>
      <h3>Direct children</h3>
      <ul class="plain-list">
        {children.customers.map((c) => (
          <li key={c.id}>
            <Link href={paths.customer(c.id)}>{c.name}</Link> <span class="sub mono">{c.id}</span>{' '}
            <ChurnedBadge customer={c} />
          </li>
        ))}
      </ul>
      {children.has_more && <p class="hint">The first 50 are listed.</p>}
    </section>
  );
}

// The API's rules (docs/api.md, "Customers"), checked as the person types; the API has the last word.
const EMAIL = /^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$/;
const MAX_ARR = 1e12;

/** The book's inputs as typed: text, so a half-typed value stays as the person left it. */
export interface BookDraft {
  owner: string;
  arr: string;
  renewal: string;
  lifecycle: Customer['lifecycle'];
  parent: string;
}

export const draftOf = (c: Customer): BookDraft => ({
  owner: c.owner ?? '',
  arr: c.arr === null ? '' : String(c.arr),
  renewal: c.renewal_at === null ? '' : c.renewal_at.slice(0, 10),
  lifecycle: c.lifecycle,
  parent: c.parent_id ?? '',
});

/** What is wrong with each field as typed, by field. */
export function bookErrors(d: BookDraft, id: string): Partial<Record<keyof BookDraft, string>> {
  const errors: Partial<Record<keyof BookDraft, string>> = {};
  if (d.owner !== '' && (d.owner.length > 320 || !EMAIL.test(d.owner))) {
    errors.owner = 'Enter the owner’s email address, or leave it empty for none.';
  }
  if (d.arr !== '') {
    const n = Number(d.arr);
    if (!Number.isFinite(n) || n < 0 || n > MAX_ARR)
      errors.arr = 'ARR is a number from 0 to 1,000,000,000,000.';
  }
  if (d.parent === id) errors.parent = 'A customer cannot be its own parent.';
  return errors;
}

/** The change of the book from `c` to the draft, as PATCH takes it (empty: null, clearing the field). */
export function bookPatch(c: Customer, d: BookDraft): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  const owner = d.owner.trim() === '' ? null : d.owner.trim();
  if (owner !== c.owner) patch.owner = owner;
  const arr = d.arr === '' ? null : Math.round(Number(d.arr) * 100) / 100;
  if (arr !== c.arr) patch.arr = arr;
  const renewal = d.renewal === '' ? null : `${d.renewal}T00:00:00.000Z`;
  if (
    (renewal === null ? null : Date.parse(renewal)) !==
    (c.renewal_at === null ? null : Date.parse(c.renewal_at))
  ) {
    patch.renewal_at = renewal;
  }
  if (d.lifecycle !== c.lifecycle) patch.lifecycle = d.lifecycle;
  const parent = d.parent.trim() === '' ? null : d.parent.trim();
  if (parent !== c.parent_id) patch.parent_id = parent;
  return patch;
}

/** The book's inputs, for the customer's edit form. `error(field)`: the message to show, if any. */
export function BookInputs(props: {
  draft: BookDraft;
  onDraft: (d: BookDraft) => void;
  error: (field: keyof BookDraft) => string | undefined;
}) {
  const { draft, onDraft, error } = props;
  const set = (field: keyof BookDraft) => (value: string) => onDraft({ ...draft, [field]: value });
  const described = (field: keyof BookDraft, id: string) => ({
    'aria-invalid': error(field) ? true : undefined,
    'aria-describedby': error(field) ? `${id}-error` : undefined,
  });
  return (
    <fieldset class="book">
      <legend>The book</legend>
      <Field id="customer-owner" label="Owner (email)" error={error('owner')}>
        <input
          id="customer-owner"
          type="email"
          maxLength={320}
          value={draft.owner}
          placeholder="csm@example.com"
          onInput={(e) => set('owner')(e.currentTarget.value)}
          {...described('owner', 'customer-owner')}
        />
      </Field>
      <NumberField
        id="customer-arr"
        label="ARR"
        value={draft.arr}
        onValue={set('arr')}
        step="any"
        min={0}
        max={MAX_ARR}
        error={error('arr')}
        {...described('arr', 'customer-arr')}
      />
      <Field id="customer-renewal" label="Next renewal" error={error('renewal')}>
        <input
          id="customer-renewal"
          type="date"
          min="1970-01-01"
          max="9999-12-31"
          value={draft.renewal}
          onInput={(e) => set('renewal')(e.currentTarget.value)}
          aria-describedby="customer-renewal-hint"
        />
        <p class="hint" id="customer-renewal-hint">
          The day it renews (UTC). Empty: none.
        </p>
      </Field>
      <Field id="customer-lifecycle" label="Lifecycle">
        <select
          id="customer-lifecycle"
          value={draft.lifecycle}
          onChange={(e) => set('lifecycle')(e.currentTarget.value)}
          aria-describedby="customer-lifecycle-hint"
        >
          <option value="active">Active</option>
          <option value="churned">Churned</option>
        </select>
        <p class="hint" id="customer-lifecycle-hint">
          A churned customer leaves the portfolio’s counts; its scores and history stay.
        </p>
      </Field>
      <Field id="customer-parent" label="Parent customer id" error={error('parent')}>
        <input
          id="customer-parent"
          class="mono"
          maxLength={255}
          value={draft.parent}
          onInput={(e) => set('parent')(e.currentTarget.value)}
          {...described('parent', 'customer-parent')}
        />
      </Field>
    </fieldset>
  );
}
