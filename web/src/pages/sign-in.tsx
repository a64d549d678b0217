import { useState } from 'preact/hooks';
import { ApiError, request, type Summary, session } from '../api.ts';
import { ErrorMessage, Page } from '../ui.tsx';

export function SignInPage({ notice, onSignedIn }: { notice?: string; onSignedIn: () => void }) {
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
    <div class="sign-in">
      <Page title="Sign in">
        {notice && (
          <div class="message error" role="alert">
            {notice}
          </div>
        )}
        <form onSubmit={submit} class="card" noValidate>
          <p>
            Sign in with a Vitals API key (<code>vk_…</code>). It is kept in this browser tab only and sent
            with every request as <code>Authorization: Bearer</code>.
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
      </Page>
    </div>
  );
}
