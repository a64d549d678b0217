// The signed-in person in the header (docs/dashboard.md, "Inbox"): their email, which opens a menu
// with their role and their own choices: the daily digest by mail (PATCH /api/me; docs/operations.md,
// "Mail"). The role went into the menu to keep an admin's links on one line at 1,280 px.
import { useState } from 'preact/hooks';
import { api, type Me, type User } from './api.ts';
import { ErrorMessage, useLoad } from './ui.tsx';

export function WhoMenu({ user }: { user: User }) {
  const me = useLoad((signal) => api.get<Me>('/api/me', signal), [user.id]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [said, setSaid] = useState<string>();
  // The box as ticked while the server is asked, so that it does not flick back meanwhile.
  const [asked, setAsked] = useState<boolean>();
  const choose = async (daily: boolean) => {
    setAsked(daily);
    setBusy(true);
    setError(undefined);
    setSaid(undefined);
    try {
      me.set(await api.patch<Me>('/api/me', { digest: daily ? 'daily' : 'off' }));
      setSaid(daily ? 'The digest will come once a day.' : 'No more digest.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
      setAsked(undefined);
    }
  };
  return (
    <details class="who" data-testid="who">
      <summary title={`${user.email} (${user.role})`}>
        <span class="email">{user.email}</span>
      </summary>
      <div class="who-menu">
        <p class="who-line">
          <span class="break">{user.email}</span> ({user.role})
        </p>
        <label class="check">
          <input
            type="checkbox"
            checked={asked ?? me.data?.digest === 'daily'}
            disabled={!me.data || busy}
            onChange={(e) => choose(e.currentTarget.checked)}
            aria-describedby="digest-hint"
          />
          Daily digest by mail
        </label>
        <p class="hint digest-note" id="digest-hint">
          Once a day: your customers that entered critical or dropped, your renewals of the next 30 days and
          your tasks due.
        </p>
        <p class="hint digest-note" role="status">
          {said}
        </p>
        <ErrorMessage error={error ?? me.error} title="Not changed:" />
      </div>
    </details>
  );
}
