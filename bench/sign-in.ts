// Sign-ins per second with the right password (docs/people.md, "Signing in"): scrypt is the cost
// by design; this measures what the lock's bookkeeping adds around it (a claim before the check,
// its release after). A real server, autocannon at 8 connections for 10 s; any non-2xx counts as
// an error.
//   ./node_modules/.bin/node bench/sign-in.ts [--backend sqlite|postgres] [--seconds 10]
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createTestDatabase, POSTGRES_URL } from '../test/helpers/stores.ts';
import { startServer } from './lib.ts';

const { values } = parseArgs({
  options: { backend: { type: 'string', default: 'sqlite' }, seconds: { type: 'string', default: '10' } },
});
const backend = values.backend === 'postgres' ? 'postgres' : 'sqlite';
if (backend === 'postgres' && !POSTGRES_URL) throw new Error('set VITALS_TEST_POSTGRES_URL');
const db = backend === 'postgres' ? await createTestDatabase('postgres') : undefined;
const server = await startServer({
  VITALS_RATE_LIMIT: 'off',
  VITALS_LOG_LEVEL: 'warn',
  ...(db?.url ? { DATABASE_URL: db.url } : {}),
});
try {
  const email = 'bench@example.com';
  const password = 'correct horse battery';
  const api = (path: string, body: unknown, auth = true) =>
    fetch(server.url + path, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(auth ? { authorization: `Bearer ${server.key}` } : {}),
      },
      body: JSON.stringify(body),
    });
  const made = (await (await api('/api/users', { email, role: 'viewer' })).json()) as {
    sign_in_link: string;
  };
  const token = made.sign_in_link.split('#token=')[1];
  const set = await api('/auth/password', { token, password }, false);
  if (set.status !== 200) throw new Error(`set password: ${set.status}`);
  const result = await autocannon({
    url: `${server.url}/auth/login`,
    connections: 8,
    duration: Number(values.seconds),
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      },
    ],
  });
  const errors = result.non2xx + result.errors + result.timeouts;
  console.log(
    `${backend}: ${Math.round(result.requests.average)} sign-ins/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, errors ${errors}`,
  );
  if (errors > 0) process.exitCode = 1;
} finally {
  await server.stop();
  await db?.drop();
}
