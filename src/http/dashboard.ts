// The web dashboard: web/, built by `npm run build` into dist/web, served at / beside the API.
// Only the built files and the dashboard's own page paths are routes. An unknown path answers the
// 404 envelope, except where a browser asks for a page outside the API's own paths: there it gets
// the dashboard's not-found page, still with 404 (docs/dashboard.md).
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';

export const DASHBOARD_DIR = fileURLToPath(new URL('../../dist/web', import.meta.url));

/** The paths the dashboard routes in the browser (web/src/router.tsx); each answers index.html. */
const PAGES = [
  '/',
  '/book',
  '/inbox',
  '/sign-in',
  '/set-password',
  '/people',
  '/audit-log',
  '/calibration',
  '/customers/:customer_id',
  '/settings',
  '/webhooks',
  '/webhooks/:webhook_id',
  '/sources',
  '/sources/:source_id',
];

/** First path segments that are never the dashboard's: a miss there is always the JSON envelope. */
const NOT_PAGES = new Set(['api', 'auth', 'assets', 'docs', 'openapi.json', 'metrics', 'healthz', 'readyz']);

/**
 * For the not-found handler: when a browser navigates (GET or HEAD, Accept naming text/html) to a
 * path outside the API's, and the dashboard is built, answers its page with 404 (the page's router
 * shows "Page not found") and says true; otherwise false, for the envelope.
 */
export function sendNotFoundPage(req: FastifyRequest, reply: FastifyReply): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (!String(req.headers.accept ?? '').includes('text/html')) return false;
  if (typeof reply.sendFile !== 'function') return false; // not built: no static files are served
  const first = (req.url.split(/[?#]/)[0] ?? '/').split('/')[1] ?? '';
  if (NOT_PAGES.has(first)) return false;
  reply.code(404).sendFile('index.html');
  return true;
}

// The API key lives in the page's sessionStorage: no script, style or connection from anywhere else.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export async function registerDashboard(app: FastifyInstance, dir = DASHBOARD_DIR): Promise<void> {
  if (!existsSync(join(dir, 'index.html'))) {
    app.log.warn({ dir }, 'the dashboard is not built; run `npm run build` to serve it at /');
    const notBuilt = new ApiError(
      'service_unavailable',
      'The dashboard is not built: run `npm run build`, then restart Vitals. The API under /api works meanwhile.',
    ).toBody();
    for (const url of PAGES) {
      app.get(url, { schema: { hide: true } }, async (_req, reply) => reply.code(503).send(notBuilt));
    }
    return;
  }
  await app.register(fastifyStatic, {
    root: dir,
    // One route per built file, found now: a path that is not a file stays a 404 envelope.
    wildcard: false,
    index: false,
    cacheControl: false,
    setHeaders: (reply, path) => {
      reply.header('x-content-type-options', 'nosniff');
      if (path.endsWith('.html')) {
        reply.header('cache-control', 'no-cache');
        reply.header('content-security-policy', CSP);
        reply.header('referrer-policy', 'no-referrer');
      } else if (relative(dir, path).startsWith(`assets${sep}`)) {
        // Vite puts a content hash in every asset's name.
        reply.header('cache-control', 'public, max-age=31536000, immutable');
      }
    },
  });
  for (const url of PAGES) {
    app.get(url, { schema: { hide: true } }, (_req, reply) => reply.sendFile('index.html'));
  }
}
