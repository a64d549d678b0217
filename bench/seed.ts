// Seeds a store directly (much faster than through HTTP): customers, and optionally scores.
import { scoreFactors } from '../src/domain/health.ts';
import type { Store } from '../src/store/store.ts';
import { type Backend, createTestDatabase } from '../test/helpers/stores.ts';
import { transaction } from '../test/helpers/transaction.ts';
import { serveDatabase } from './lib.ts';

export const customerId = (i: number) => `cus_${String(i).padStart(7, '0')}`;

export async function seed(
  store: Store,
  accountId: string,
  n: number,
  opts: { scores: boolean },
): Promise<void> {
  const settings = await store.getSettings(accountId);
  const BATCH = 5000;
  for (let i = 0; i < n; i += BATCH) {
    await transaction(store, async (tx) => {
      const scores = [];
      for (let j = i; j < Math.min(n, i + BATCH); j++) {
        const id = customerId(j);
        const now = Date.now();
        await tx.insertCustomer(accountId, {
          id,
          name: `Customer ${j}`,
          email: `c${j}@example.com`,
          metadata: { plan: j % 3 === 0 ? 'pro' : 'basic', seats: j % 50 },
          createdAt: now,
          updatedAt: now,
        });
        if (opts.scores) {
          const factors = { usage: (j % 97) / 97, support: (j % 89) / 89, billing: (j % 83) / 83 };
          scores.push(scoreFactors(id, null, factors, settings, now).record);
        }
      }
      if (scores.length > 0) await tx.writeScores(accountId, scores, 'factors_updated');
    });
  }
}

/**
 * A fresh database of `n` seeded customers (with scores when asked) and a Vitals process
 * serving it as shipped: key cache 2 s, logging at warn, and the rate limiter on but out of
 * the load generator's reach (its cost is part of the figure). `env` overrides any of it.
 */
export async function dataset(
  backend: Backend,
  n: number,
  scores: boolean,
  env: Record<string, string> = {},
  more?: (store: Store, accountId: string) => Promise<void>,
) {
  const db = await createTestDatabase(backend);
  const store = db.open();
  await store.migrate();
  const account = await store.ensureAccount('default', Date.now());
  const t0 = performance.now();
  await seed(store, account.id, n, { scores });
  console.log(
    `  seeded ${n} customers${scores ? ' with scores' : ''} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  if (more) await more(store, account.id);
  await store.close();
  const server = await serveDatabase(db, { VITALS_RATE_LIMIT: '1000000/s', ...env });
  const headers = { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' };
  return { db, server, headers };
}
