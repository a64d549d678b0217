// The web dashboard: web/, built by `npm run build` into dist/web, served at / beside the API.
// Only the built files and the dashboard's own page paths are routes, so every other unknown
// path (under /api or not) still answers the 404 envelope.
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../domain/errors.ts';

export const DASHBOARD_DIR = fileURLToPath(new URL('../../dist/web', import.meta.url));

/** The paths the dashboard routes in the browser (web/src/router.ts); each answers index.html. */
const PAGES = [
  '/',
  '/sign-in',
  '/set-password',
  '/people',
  '/audit-log',
  '/customers/:customer_id',
  '/settings',
  '/webhooks',
  '/webhooks/:webhook_id',
];

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
