// The store contract: ONE suite, run unchanged against every backend (SQLite always, PostgreSQL
// when VITALS_TEST_POSTGRES_URL is set, else reported as skipped). A backend is a Store exactly
// when it passes.
import { after, before, describe } from 'node:test';
import type { Store } from '../src/store/store.ts';
import { ALL_BACKENDS, backendSkip, createTestDatabase, type TestDatabase } from './helpers/stores.ts';
import {
  type ContractContext,
  emptyDatabase,
  isolatedDatabase,
  newAccount,
} from './store-contract/context.ts';
import { customersContract } from './store-contract/customers.ts';
import { idempotencyContract } from './store-contract/idempotency.ts';
import { peopleContract } from './store-contract/people.ts';
import { portfolioContract } from './store-contract/portfolio.ts';
import { queueContract } from './store-contract/queue.ts';
import { remainingContract } from './store-contract/remaining.ts';
import { retentionContract } from './store-contract/retention.ts';
import { schemaContract } from './store-contract/schema.ts';
import { scoresContract } from './store-contract/scores.ts';
import { textContract } from './store-contract/text.ts';
import { transactionsContract } from './store-contract/transactions.ts';
import { webhooksContract } from './store-contract/webhooks.ts';

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
  });
}
