// The page a one-time link opens (docs/people.md, "Adding people"): the token travels in the
// URL's fragment, which never reaches a server log; the person chooses a password here.
import { useState } from 'preact/hooks';
import { request } from '../api.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, Page } from '../ui.tsx';

const MIN = 12;

export function SetPasswordPage() {
  const [token] = useState(() => new URLSearchParams(location.hash.slice(1)).get('token') ?? '');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const [busy, setBusy] = useState(false);
  const problem =
    password.length < MIN
      ? `At least ${MIN} characters.`
      : repeat !== password
        ? 'The two passwords differ.'
        : undefined;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (problem) return;
    setBusy(true);
    setError(undefined);
    try {
      const answer = await request<{ user: { email: string } }>('POST', '/auth/password', {
        token,
        password,
      });
      history.replaceState(null, '', paths.setPassword); // the token is spent: off the address bar
      setDone(answer.user.email);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (done) {
    return (
      <Page title="Password set">
        <p role="status">
          The password of {done} is set. <Link href={paths.signIn}>Sign in</Link>.
        </p>
      </Page>
    );
  }
  return (
    <Page title="Choose your password">
      {!token && <p class="message error">This address has no sign-in token. Open the link you were sent.</p>}
      <form onSubmit={submit} class="card" noValidate>
        <label for="new-password">New password</label>
        <input
          id="new-password"
          type="password"
          autoComplete="new-password"
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
          aria-describedby="password-problem"
        />
        <label for="repeat-password">The same again</label>
        <input
          id="repeat-password"
          type="password"
          autoComplete="new-password"
          value={repeat}
          onInput={(e) => setRepeat(e.currentTarget.value)}
          aria-describedby="password-problem"
        />
        <p id="password-problem" class={problem ? 'hint' : 'sr-only'} aria-live="polite">
          {problem ?? 'The password can be used.'}
        </p>
        <ErrorMessage error={error} title="Not set:" />
        <button type="submit" disabled={busy || Boolean(problem) || !token}>
          {busy ? 'Saving…' : 'Set password'}
        </button>
      </form>
    </Page>
  );
}
