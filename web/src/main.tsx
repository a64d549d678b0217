import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, can, onUnauthorized, query, request, session, type User } from './api.ts';
import { AuditPage } from './pages/audit.tsx';
import { CalibrationPage } from './pages/calibration.tsx';
import { CustomerPage } from './pages/customer.tsx';
import { InboxCount, InboxPage } from './pages/inbox.tsx';
import { MyBookPage } from './pages/my-book.tsx';
import { PeoplePage } from './pages/people.tsx';
import { PortfolioPage } from './pages/portfolio.tsx';
import { VIEWS_CHANGED } from './pages/portfolio-filters.tsx';
import { SetPasswordPage } from './pages/set-password.tsx';
import { SettingsPage } from './pages/settings.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { SourcePage } from './pages/source.tsx';
import { SourcesPage } from './pages/sources.tsx';
import { WebhookPage } from './pages/webhook.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { Link, navigate, paths, type Route, useRoute } from './router.tsx';
import { Page, useLoad } from './ui.tsx';
import { WhoMenu } from './who.tsx';
import './styles.css';

const NAV = [
  { href: paths.book, label: 'My book', pages: ['book'], admin: false, person: true },
  { href: paths.inbox, label: 'Inbox', pages: ['inbox'], admin: false },
  { href: paths.portfolio, label: 'Portfolio', pages: ['portfolio', 'customer'], admin: false },
  { href: paths.calibration, label: 'Calibration', pages: ['calibration'], admin: false },
  { href: paths.settings, label: 'Scoring', pages: ['settings'], admin: true },
  { href: paths.sources, label: 'Sources', pages: ['sources', 'source'], admin: false },
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
    case 'book':
      return <MyBookPage />;
    case 'inbox':
      return <InboxPage />;
    case 'customer':
      return <CustomerPage key={route.id} id={route.id} />;
    case 'settings':
      return <SettingsPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'webhook':
      return <WebhookPage key={route.id} id={route.id} />;
    case 'sources':
      return <SourcesPage />;
    case 'source':
      return <SourcePage key={route.id} id={route.id} />;
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

/** Whether a page of the navigation is for this session: admins' pages, and a person's own. */
const shown = (item: (typeof NAV)[number]) =>
  (!item.admin || can('administer')) && (!('person' in item) || Boolean(session.user));

interface SavedView {
  id: string;
  name: string;
  query: string;
}

/** The person's saved views of the portfolio (docs/api.md, "Saved views"), each a link to it. */
function SavedViews() {
  const views = useLoad((signal) => api.get<{ data: SavedView[] }>('/api/views', signal), []);
  useEffect(() => {
    const reload = () => views.reload();
    window.addEventListener(VIEWS_CHANGED, reload);
    return () => window.removeEventListener(VIEWS_CHANGED, reload);
  }, [views.reload]);
  const list = views.data?.data ?? [];
  if (list.length === 0) return null;
  const remove = async (id: string) => {
    await api.delete(`/api/views/${encodeURIComponent(id)}`).catch(() => {});
    views.reload();
  };
  return (
    <li>
      <details class="views">
        <summary>Saved views</summary>
        <ul>
          {list.map((v) => (
            <li key={v.id}>
              <Link href={`${paths.portfolio}${v.query ? `?${v.query}` : ''}`}>{v.name}</Link>
              <button
                type="button"
                class="link"
                aria-label={`Delete the view ${v.name}`}
                onClick={() => remove(v.id)}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      </details>
    </li>
  );
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
          {NAV.filter(shown).map((item) => (
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
  // A person who owns customers starts on My book (docs/dashboard.md, "My book"): once, when the
  // dashboard opens on the plain portfolio address; the portfolio stays one click away.
  const home = useRef(false);
  useEffect(() => {
    if (!signedIn || !session.user || home.current) return;
    home.current = true;
    if (route.page !== 'portfolio' || location.search !== '') return;
    api
      .get<{ customers: unknown[] }>(`/api/customers${query({ owner: 'me', limit: 1 })}`)
      .then((page) => {
        if (page.customers.length > 0 && location.pathname === paths.portfolio && location.search === '') {
          navigate(paths.book, { replace: true });
        }
      })
      .catch(() => {});
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
                {NAV.filter(shown).map((item) => (
                  <li key={item.href}>
                    <Link
                      href={item.href}
                      aria-current={item.pages.includes(route.page) ? 'page' : undefined}
                    >
                      {item.label}
                      {item.href === paths.inbox && session.user && (
                        <InboxCount where={location.pathname + location.search} />
                      )}
                    </Link>
                  </li>
                ))}
                {session.user && <SavedViews />}
                <li>
                  <a href="/docs">API docs</a>
                </li>
              </ul>
            </nav>
          )}
          {signedIn && session.user && <WhoMenu user={session.user} />}
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
