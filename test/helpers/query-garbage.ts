// Run with --expose-gc (test/store/postgres-query-gc.test.ts): makes 20,000 postgres.js queries
// that are never sent (a query is lazy: nothing connects), drops them, runs two young-generation
// collections and prints how many bytes the old generation grew by. Queries nothing refers to
// should die young; each one that survives is promoted, with its parameters.
import { getHeapSpaceStatistics } from 'node:v8';
import postgres from 'postgres';

const gc = (globalThis as { gc?: (options?: { type: 'minor' | 'major' }) => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const oldSpace = () =>
  getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0;
const sql = postgres('postgres://127.0.0.1:1/never', { max: 1 });
gc();
gc({ type: 'minor' });
const before = oldSpace();
for (let i = 0; i < 20_000; i++) sql.unsafe('SELECT $1::int', [i], { prepare: true });
gc({ type: 'minor' });
gc({ type: 'minor' });
console.log(oldSpace() - before);
await sql.end();
