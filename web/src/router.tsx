// Client-side routes on the History API. The server answers index.html for exactly these
// paths (PAGES in src/http/dashboard.ts); keep the two lists in step.
import type { AnchorHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'portfolio' }
  | { page: 'book' }
  | { page: 'inbox' }
  | { page: 'sign-in' }
  | { page: 'set-password' }
  | { page: 'people' }
  | { page: 'audit' }
  | { page: 'calibration' }
  | { page: 'customer'; id: string }
  | { page: 'settings' }
  | { page: 'webhooks' }
  | { page: 'webhook'; id: string }
  | { page: 'sources' }
  | { page: 'source'; id: string }
  | { page: 'not-found' };

export const paths = {
  portfolio: '/',
  book: '/book',
  inbox: '/inbox',
  signIn: '/sign-in',
  setPassword: '/set-password',
  people: '/people',
  audit: '/audit-log',
  calibration: '/calibration',
  settings: '/settings',
  webhooks: '/webhooks',
  sources: '/sources',
  customer: (id: string) => `/customers/${encodeURIComponent(id)}`,
  webhook: (id: string) => `/webhooks/${encodeURIComponent(id)}`,
  source: (id: string) => `/sources/${encodeURIComponent(id)}`,
};

export function parse(pathname: string): Route {
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === '/') return { page: 'portfolio' };
  if (path === '/book') return { page: 'book' };
  if (path === '/inbox') return { page: 'inbox' };
  if (path === '/sign-in') return { page: 'sign-in' };
  if (path === '/set-password') return { page: 'set-password' };
  if (path === '/people') return { page: 'people' };
  if (path === '/audit-log') return { page: 'audit' };
  if (path === '/calibration') return { page: 'calibration' };
  if (path === '/settings') return { page: 'settings' };
  if (path === '/webhooks') return { page: 'webhooks' };
  if (path === '/sources') return { page: 'sources' };
  const m = /^\/(customers|webhooks|sources)\/([^/]+)$/.exec(path);
  if (m) {
    let id: string;
    try {
      id = decodeURIComponent(m[2] as string);
    } catch {
      return { page: 'not-found' };
    }
    if (m[1] === 'customers') return { page: 'customer', id };
    return m[1] === 'webhooks' ? { page: 'webhook', id } : { page: 'source', id };
  }
  return { page: 'not-found' };
}

const CHANGE = 'vitals:navigate';

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new Event(CHANGE));
}

/** The current route; re-renders on navigate() and on back/forward. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parse(location.pathname));
    window.addEventListener('popstate', update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return route;
}

/** The current query string (with its '?', or ''); re-renders on navigate() and on back/forward. */
export function useSearch(): string {
  const [search, setSearch] = useState(() => location.search);
  useEffect(() => {
    const update = () => setSearch(location.search);
    window.addEventListener('popstate', update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return search;
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { href: string; children: ComponentChildren };

/** A real link (middle click, copy address and the rest work) that navigates in place on a plain click. */
export function Link({ href, children, ...rest }: LinkProps) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
