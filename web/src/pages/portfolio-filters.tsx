// The portfolio's book filters and sort (../portfolio-view.ts), and saving the view under a name
// (docs/api.md, "Saved views"): a change of any of them is a new URL, so Back returns to the last.
import { useState } from 'preact/hooks';
import { api, session } from '../api.ts';
import {
  describeFilters,
  LIFECYCLES,
  type Lifecycle,
  type PortfolioView,
  RENEWALS,
  type Renewal,
  SORTS,
  type Sort,
  viewSearch,
} from '../portfolio-view.ts';
import { ErrorMessage, Notice } from '../ui.tsx';

/** Told when the saved views change, so the navigation lists them again (main.tsx). */
export const VIEWS_CHANGED = 'vitals:views-changed';

export function BookFilters({ view, onView }: { view: PortfolioView; onView: (v: PortfolioView) => void }) {
  const person = session.user;
  const [owner, setOwner] = useState(view.owner === 'me' || view.owner === 'none' ? '' : view.owner);
  const submitOwner = (e: Event) => {
    e.preventDefault();
    onView({ ...view, owner: owner.trim() });
  };
  const summary = describeFilters(view);
  return (
    <section aria-labelledby="filters-title" class="card">
      <h2 id="filters-title">Filters</h2>
      <div class="filters">
        <div class="inline-field">
          <label for="filter-owner-kind">Owner</label>
          <select
            id="filter-owner-kind"
            value={view.owner === 'me' || view.owner === 'none' || view.owner === '' ? view.owner : 'email'}
            onChange={(e) => {
              const kind = e.currentTarget.value;
              onView({ ...view, owner: kind === 'email' ? owner.trim() : kind });
            }}
          >
            <option value="">Anyone</option>
            {person && <option value="me">Me</option>}
            <option value="none">No owner</option>
            <option value="email">This email…</option>
          </select>
        </div>
        {view.owner !== 'me' && view.owner !== 'none' && view.owner !== '' && (
          <form onSubmit={submitOwner} class="search-row">
            <label for="filter-owner" class="sr-only">
              Owner’s email
            </label>
            <input
              id="filter-owner"
              type="email"
              maxLength={320}
              placeholder="csm@example.com"
              value={owner}
              onInput={(e) => setOwner(e.currentTarget.value)}
            />
            <button type="submit">Apply</button>
          </form>
        )}
        <Choice
          id="filter-renewal"
          label="Renewing"
          value={view.renewal}
          options={{ '': 'Any time', ...RENEWALS }}
          onChoose={(renewal) => onView({ ...view, renewal: renewal as Renewal | '' })}
        />
        <Choice
          id="filter-lifecycle"
          label="Customers"
          value={view.lifecycle}
          options={{ '': 'Active (default)', churned: LIFECYCLES.churned, all: LIFECYCLES.all }}
          onChoose={(lifecycle) => onView({ ...view, lifecycle: lifecycle as Lifecycle | '' })}
        />
        <Choice
          id="filter-sort"
          label="Order"
          value={view.sort}
          options={SORTS}
          onChoose={(sort) => onView({ ...view, sort: sort as Sort })}
        />
      </div>
      {summary && <p class="hint">Every panel shows {summary}.</p>}
      {person && <SaveView view={view} />}
    </section>
  );
}

/** A labelled select of `options` (value → label), beside the other filters. */
function Choice(props: {
  id: string;
  label: string;
  value: string;
  options: Record<string, string>;
  onChoose: (value: string) => void;
}) {
  return (
    <div class="inline-field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={(e) => props.onChoose(e.currentTarget.value)}>
        {Object.entries(props.options).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Saves the view (its query string) under a name, for the signed-in person alone. */
function SaveView({ view }: { view: PortfolioView }) {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (name.trim() === '') {
      setError(new Error('Give the view a name.'));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await api.post('/api/views', { name: name.trim(), query: viewSearch(view).slice(1) });
      setSaved(name.trim());
      setName('');
      window.dispatchEvent(new Event(VIEWS_CHANGED));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} class="search-row save-view">
      <label for="view-name" class="sr-only">
        Name of the view
      </label>
      <input
        id="view-name"
        maxLength={100}
        placeholder="Name this view, e.g. My renewals"
        value={name}
        onInput={(e) => {
          setName(e.currentTarget.value);
          setSaved(undefined);
        }}
      />
      <button type="submit" class="secondary" disabled={busy}>
        {busy ? 'Saving…' : 'Save view'}
      </button>
      {saved && <Notice>{`Saved “${saved}”: it is in the navigation.`}</Notice>}
      <ErrorMessage error={error} title="Not saved:" />
    </form>
  );
}
