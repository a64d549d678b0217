// The store contract: ONE suite, run unchanged against every backend (SQLite always, PostgreSQL
// when VITALS_TEST_POSTGRES_URL is set, else reported as skipped). A backend is a Store exactly
// when it passes.
import { after, before, describe } from 'node:test';
import type { Store } from '../../src/store/store.ts';
import { ALL_BACKENDS, backendSkip, createTestDatabase, type TestDatabase } from '../helpers/stores.ts';
import { type ContractContext, emptyDatabase, isolatedDatabase, newAccount } from './contract/context.ts';
import { customersContract } from './contract/customers.ts';
import { idempotencyContract } from './contract/idempotency.ts';
import { metricsContract } from './contract/metrics.ts';
import { peopleContract } from './contract/people.ts';
import { portfolioContract } from './contract/portfolio.ts';
import { queueContract } from './contract/queue.ts';
import { remainingContract } from './contract/remaining.ts';
import { retentionContract } from './contract/retention.ts';
import { schemaContract } from './contract/schema.ts';
import { scoresContract } from './contract/scores.ts';
import { textContract } from './contract/text.ts';
import { timelineContract } from './contract/timeline.ts';
import { transactionsContract } from './contract/transactions.ts';
import { viewsContract } from './contract/views.ts';
import { webhooksContract } from './contract/webhooks.ts';
import { workContract } from './contract/work.ts';

for (const backend of ALL_BACKENDS) {
  describe(`store contract: ${backend}`, { skip: backendSkip(backend) }, () => {
    let db: TestDatabase | undefined;
    let store: Store | undefined;
    before(async () => {
      db = await createTestDatabase(backend);
      store = db.open();
      await store.migrate();
    });
    after(() => db?.drop());

    const shared = (): Store => {
      if (!store) throw new Error('the suite database is not open');
      return store;
    };
    const c: ContractContext = {
      backend,
      store: shared,
      account: () => newAccount(shared()),
      isolated: (t) => isolatedDatabase(backend, t),
      database: (t) => emptyDatabase(backend, t),
    };
    schemaContract(c);
    customersContract(c);
    scoresContract(c);
    webhooksContract(c);
    queueContract(c);
    transactionsContract(c);
    idempotencyContract(c);
    retentionContract(c);
    textContract(c);
    peopleContract(c);
    portfolioContract(c);
    remainingContract(c);
    metricsContract(c);
    viewsContract(c);
    workContract(c);
    timelineContract(c);
  });
}
