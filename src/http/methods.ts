// Which methods a path serves, for the 405 answer (docs/api.md, "Unsupported methods"): every
// route is mirrored into a find-my-way router (Fastify's own, configured alike), and a request
// that matched no route asks it which methods would have matched its path.
import type { FastifyInstance, HTTPMethods } from 'fastify';
import FindMyWay from 'find-my-way';

const noop = () => {};

export function trackMethods(
  app: FastifyInstance,
  routerOptions: { ignoreTrailingSlash: boolean; maxParamLength: number },
): (path: string) => string[] {
  const router = FindMyWay(routerOptions);
  const methods = new Set<string>();
  const seen = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const method of ([] as HTTPMethods[]).concat(route.method)) {
      const url = route.url ?? route.path;
      // The same method and path may reach this hook twice (Fastify's HEAD for a GET).
      if (seen.has(`${method} ${url}`)) continue;
      seen.add(`${method} ${url}`);
      router.on(method as never, url, noop);
      methods.add(method);
    }
  });
  return (path) => [...methods].filter((m) => router.find(m as never, path) !== null).sort(byUsualOrder);
}

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const byUsualOrder = (a: string, b: string) => ORDER.indexOf(a) - ORDER.indexOf(b);
