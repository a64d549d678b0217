import { useState } from 'preact/hooks';
import { ApiError, request, type Summary, session, type User } from '../api.ts';
import { ErrorMessage, Page } from '../ui.tsx';

/** Signs a person in; the session cookie is set by the answer, the CSRF token kept in memory. */
export async function signInWithPassword(email: string, password: string): Promise<void> {
  const answer = await request<{ user: User; csrf_token: string }>('POST', '/auth/login', {
    email,
    password,
  });
  session.signedIn(answer.user, answer.csrf_token);
}

export function SignInPage({ notice, onSignedIn }: { notice?: string; onSignedIn: () => void }) {
  return (
    <div class="sign-in">
      <Page title="Sign in">
        {notice && (
          <div class="message error" role="alert">
            {notice}
          </div>
        )}
        <PasswordForm onSignedIn={onSignedIn} />
        <KeyForm onSignedIn={onSignedIn} />
      </Page>
    </div>
  );
}

function PasswordForm({ onSignedIn }: { onSignedIn: () => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signInWithPassword(email.trim(), password);
      onSignedIn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} class="card" noValidate>
      <h2 id="password-title">With your email</h2>
      <label for="email">Email</label>
      <input
        id="email"
        type="email"
        autoComplete="username"
        value={email}
        onInput={(e) => setEmail(e.currentTarget.value)}
        required
      />
      <label for="password">Password</label>
      <input
        id="password"
        type="password"
        autoComplete="current-password"
        value={password}
        onInput={(e) => setPassword(e.currentTarget.value)}
        required
      />
      <div id="password-error">
        <ErrorMessage error={error} />
      </div>
      <button type="submit" disabled={busy}>
        {busy ? 'Checking…' : 'Sign in with email'}
      </button>
    </form>
  );
}

function KeyForm({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const candidate = key.trim();
    if (!candidate) {
      setError(new Error('Enter your API key.'));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      // Any authenticated call tells whether the key is good; the summary is small.
      await request<Summary>('GET', '/api/health-scores/summary', undefined, { key: candidate });
      session.signIn(candidate);
      onSignedIn();
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? new ApiError(401, err.code, `That API key was not accepted. ${err.message}`)
          : err,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} class="card" noValidate>
      <h2 id="key-title">Or with an API key</h2>
      <p>
        For a single-user install: a Vitals API key (<code>vk_…</code>), kept in this browser tab only and
        sent with every request as <code>Authorization: Bearer</code>.
      </p>
      <label for="api-key">API key</label>
      <input
        id="api-key"
        name="api-key"
        type="password"
        autoComplete="off"
        spellcheck={false}
        value={key}
        onInput={(e) => setKey(e.currentTarget.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? 'sign-in-error' : 'api-key-hint'}
        required
      />
      <p class="hint" id="api-key-hint">
        No key? Run <code>npx vitals keys create</code> on the server.
      </p>
      <div id="sign-in-error">
        <ErrorMessage error={error} />
      </div>
      <button type="submit" disabled={busy}>
        {busy ? 'Checking…' : 'Sign in'}
      </button>
    </form>
  );
}
