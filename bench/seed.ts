// Seeds a store directly (much faster than through HTTP): customers, and optionally scores.
import { scoreFactors } from '../src/domain/health.ts';
import type { Store } from '../src/store/store.ts';

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
    await store.transaction(async (tx) => {
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
