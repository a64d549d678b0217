// The account's people, for admins (docs/people.md): add one (the answer's one-time link is shown
// once, to send them), change a role, remove someone. The API allows this to admins only.
import { useState } from 'preact/hooks';
import { api, type User } from '../api.ts';
import { ErrorMessage, Loading, Notice, Page, useLoad } from '../ui.tsx';

const ROLES = ['viewer', 'editor', 'admin'] as const;
const ROLE_HINT = 'Viewers read; editors also change customers and scores; admins do everything.';

export function PeoplePage() {
  const people = useLoad((signal) => api.get<{ data: User[] }>('/api/users', signal), []);
  const [link, setLink] = useState<{ email: string; url: string }>();
  return (
    <Page title="People">
      <AddPerson
        onAdded={(email, url) => {
          setLink({ email, url });
          people.reload();
        }}
      />
      {link && (
        <section class="secret" aria-labelledby="link-title">
          <h2 id="link-title">One-time link for {link.email}</h2>
          <p>
            Send this link to {link.email}: it lets them choose a password, once, within 24 hours.{' '}
            <strong>It is shown only this once.</strong>
          </p>
          <label for="link-value">Sign-in link</label>
          <div class="copy-row">
            <input id="link-value" readOnly value={link.url} spellcheck={false} />
          </div>
          <button type="button" class="secondary" onClick={() => setLink(undefined)}>
            I have sent it
          </button>
        </section>
      )}
      <section aria-labelledby="people-title" class="card">
        <h2 id="people-title">Who can sign in</h2>
        <ErrorMessage error={people.error} />
        {people.loading && !people.data && <Loading what="people" />}
        {people.data && people.data.data.length === 0 && <p>Nobody yet: add the first person above.</p>}
        {people.data && people.data.data.length > 0 && (
          <ul class="people">
            {people.data.data.map((u) => (
              <Person key={u.id} user={u} onChanged={people.reload} />
            ))}
          </ul>
        )}
      </section>
    </Page>
  );
}

function AddPerson({ onAdded }: { onAdded: (email: string, url: string) => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<User['role']>('viewer');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const answer = await api.post<{ user: User; sign_in_link: string }>('/api/users', {
        email: email.trim(),
        role,
      });
      onAdded(answer.user.email, answer.sign_in_link);
      setEmail('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} class="card form" noValidate>
      <h2>Add a person</h2>
      <label for="person-email">Email</label>
      <input id="person-email" type="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      <label for="person-role">Role</label>
      <select id="person-role" value={role} onChange={(e) => setRole(e.currentTarget.value as User['role'])}>
        {ROLES.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      <p class="hint">{ROLE_HINT}</p>
      <ErrorMessage error={error} title="Not added:" />
      <button type="submit" disabled={busy || email.trim() === ''}>
        {busy ? 'Adding…' : 'Add person'}
      </button>
    </form>
  );
}

function Person({ user, onChanged }: { user: User; onChanged: () => void }) {
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const change = async (role: string) => {
    setError(undefined);
    try {
      await api.patch(`/api/users/${encodeURIComponent(user.id)}`, { role });
      setSaved(true);
      onChanged();
    } catch (err) {
      setError(err);
    }
  };
  const remove = async () => {
    if (!confirm(`Remove ${user.email}? Their sessions end at once.`)) return;
    try {
      await api.delete(`/api/users/${encodeURIComponent(user.id)}`);
      onChanged();
    } catch (err) {
      setError(err);
    }
  };
  const id = `role-${user.id}`;
  return (
    <li>
      <span class="email">{user.email}</span>
      <label for={id} class="sr-only">
        Role of {user.email}
      </label>
      <select id={id} value={user.role} onChange={(e) => change(e.currentTarget.value)}>
        {ROLES.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      <button type="button" class="secondary" onClick={remove}>
        Remove <span class="sr-only">{user.email}</span>
      </button>
      {saved && <Notice>Role saved.</Notice>}
      <ErrorMessage error={error} />
    </li>
  );
}
