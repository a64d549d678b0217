// The page a one-time link opens (docs/people.md, "Adding people"): the token travels in the
// URL's fragment, which never reaches a server log. The page first asks who the link is for and
// names them; the person chooses a password and is signed in by the answer.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { request, session, type User } from '../api.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, Loading, Page, useLoad } from '../ui.tsx';

const MIN = 12;

export function SetPasswordPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [token] = useState(() => new URLSearchParams(location.hash.slice(1)).get('token') ?? '');
  const link = useLoad(
    (signal) =>
      token
        ? request<{ user: User }>('POST', '/auth/password/link', { token }, { signal })
        : Promise.resolve(null),
    [],
  );
  const title = 'Choose your password';
  if (!token) {
    return (
      <Centered title={title}>
        <p class="message error" role="alert">
          This address has no sign-in token. Open the link you were sent, whole.
        </p>
      </Centered>
    );
  }
  if (link.loading && !link.data) {
    return (
      <Centered title={title}>
        <Loading what="who this link is for" />
      </Centered>
    );
  }
  if (!link.data) {
    return (
      <Centered title={title}>
        <ErrorMessage error={link.error} />
        <p>
          Already set your password? <Link href={paths.signIn}>Sign in</Link>.
        </p>
      </Centered>
    );
  }
  return (
    <Centered title={title}>
      <PasswordForm token={token} user={link.data.user} onSignedIn={onSignedIn} />
    </Centered>
  );
}

function Centered({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <div class="sign-in">
      <Page title={title}>{children}</Page>
    </div>
  );
}

function PasswordForm({ token, user, onSignedIn }: { token: string; user: User; onSignedIn: () => void }) {
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<unknown>();
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
      const answer = await request<{ user: User; csrf_token: string }>('POST', '/auth/password', {
        token,
        password,
      });
      session.signedIn(answer.user, answer.csrf_token);
      history.replaceState(null, '', paths.setPassword); // the token is spent: off the address bar
      onSignedIn();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} class="card" noValidate>
      <p data-testid="link-for">
        For <strong>{user.email}</strong> ({user.role}) in the account <strong>{user.account}</strong>.
      </p>
      {/* For password managers: the account the new password belongs to. */}
      <input type="email" name="username" autoComplete="username" value={user.email} readOnly hidden />
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
      <button type="submit" disabled={busy || Boolean(problem)}>
        {busy ? 'Saving…' : 'Set password and sign in'}
      </button>
    </form>
  );
}
