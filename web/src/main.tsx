import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { can, onUnauthorized, request, session, type User } from './api.ts';
import { AuditPage } from './pages/audit.tsx';
import { CalibrationPage } from './pages/calibration.tsx';
import { CustomerPage } from './pages/customer.tsx';
import { PeoplePage } from './pages/people.tsx';
import { PortfolioPage } from './pages/portfolio.tsx';
import { SetPasswordPage } from './pages/set-password.tsx';
import { SettingsPage } from './pages/settings.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { WebhookPage } from './pages/webhook.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { Link, navigate, paths, type Route, useRoute } from './router.tsx';
import { Page } from './ui.tsx';
import './styles.css';

const NAV = [
  { href: paths.portfolio, label: 'Portfolio', pages: ['portfolio', 'customer'], admin: false },
  { href: paths.calibration, label: 'Calibration', pages: ['calibration'], admin: false },
  { href: paths.settings, label: 'Weights, thresholds & alerts', pages: ['settings'], admin: true },
  { href: paths.webhooks, label: 'Webhooks', pages: ['webhooks', 'webhook'], admin: true },
  { href: paths.people, label: 'People', pages: ['people'], admin: true },
  { href: paths.audit, label: 'Audit log', pages: ['audit'], admin: true },
];

/** A person's session lives in an HTTP-only cookie: ask the server whether there is one. */
async function restoreSession(): Promise<boolean> {
  if (session.key !== null) return true;
  try {
    const found = await request<{ user: User; csrf_token: string }>('GET', '/auth/session', undefined, {
      headers: {},
    });
    session.signedIn(found.user, found.csrf_token);
    return true;
  } catch {
    return false;
  }
}

function Content({ route }: { route: Route }) {
  switch (route.page) {
    case 'portfolio':
    case 'sign-in':
      return <PortfolioPage />;
    case 'customer':
      return <CustomerPage key={route.id} id={route.id} />;
    case 'settings':
      return <SettingsPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'webhook':
      return <WebhookPage key={route.id} id={route.id} />;
    case 'people':
      return <PeoplePage />;
    case 'audit':
      return <AuditPage />;
    case 'calibration':
      return <CalibrationPage />;
    case 'not-found':
      return <NotFoundPage />;
  }
}

/** A mistyped address (the server answered 404 with this page): said plainly, signed in or not. */
function NotFoundPage() {
  return (
    <Page title="Page not found">
      <div class="card">
        <p>
          There is no page at <code>{location.pathname}</code>. The dashboard's pages are:
        </p>
        <ul>
          {NAV.filter((item) => !item.admin || can('administer')).map((item) => (
            <li key={item.href}>
              <Link href={item.href}>{item.label}</Link>
            </li>
          ))}
          <li>
            <a href="/docs">API docs</a>
          </li>
        </ul>
      </div>
    </Page>
  );
}

function App() {
  const route = useRoute();
  const [signedIn, setSignedIn] = useState(() => session.key !== null);
  const [checked, setChecked] = useState(() => session.key !== null);
  const [notice, setNotice] = useState<string>();

  useEffect(() => {
    if (checked) return;
    restoreSession().then((found) => {
      setSignedIn(found);
      setChecked(true);
    });
  }, [checked]);

  useEffect(() => {
    onUnauthorized((err) => {
      session.signOut();
      setNotice(`Vitals no longer accepts this sign-in: ${err.message} Sign in again.`);
      setSignedIn(false);
    });
  }, []);
  useEffect(() => {
    if (signedIn && route.page === 'sign-in') navigate(paths.portfolio, { replace: true });
  }, [signedIn, route.page]);

  const signOut = async () => {
    // Awaited: a page loaded right after must not find the session still open.
    if (session.user) await request('POST', '/auth/logout').catch(() => {});
    session.signOut();
    setNotice(undefined);
    setSignedIn(false);
    navigate(paths.signIn);
  };

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="bar">
          <Link href={paths.portfolio} class="brand">
            <img src="/favicon.svg" alt="" width={24} height={24} />
            Vitals
          </Link>
          {signedIn && (
            <nav aria-label="Main">
              <ul>
                {NAV.filter((item) => !item.admin || can('administer')).map((item) => (
                  <li key={item.href}>
                    <Link
                      href={item.href}
                      aria-current={item.pages.includes(route.page) ? 'page' : undefined}
                    >
                      {item.label}
                    </Link>
                  </li>
                ))}
                <li>
                  <a href="/docs">API docs</a>
                </li>
              </ul>
            </nav>
          )}
          {signedIn && session.user && (
            <span class="who" data-testid="who" title={`${session.user.email} (${session.user.role})`}>
              <span class="email">{session.user.email}</span> ({session.user.role})
            </span>
          )}
          {signedIn && (
            <button type="button" class="secondary sign-out" onClick={signOut}>
              Sign out
            </button>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {route.page === 'set-password' ? (
          <SetPasswordPage
            onSignedIn={() => {
              setNotice(undefined);
              setSignedIn(true);
              setChecked(true);
              navigate(paths.portfolio, { replace: true });
            }}
          />
        ) : route.page === 'not-found' ? (
          <NotFoundPage />
        ) : !checked ? null : signedIn ? (
          <Content route={route} />
        ) : (
          <SignInPage
            notice={notice}
            onSignedIn={() => {
              setNotice(undefined);
              setSignedIn(true);
            }}
          />
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
