// Writes for the contract's test of Store.run: a module of its own (no tests in it), since the
// SQLite writer thread imports a write's module to run it.
import { ApiError } from '../../../src/domain/errors.ts';
import type { CustomerWrite } from '../../../src/store/store.ts';
import { write } from '../../../src/store/write.ts';

/** Inserts the customers; with `refuse`, then throws an ApiError, so nothing is kept. */
export const insertCustomers = write(async function insertCustomers(
  tx,
  accountId: string,
  customers: CustomerWrite[],
  refuse: boolean,
) {
  for (const c of customers) await tx.insertCustomer(accountId, c);
  if (refuse) throw new ApiError('parameter_invalid', 'refused on purpose', 'customers.1');
  return customers.map((c) => c.id);
});

/** One result per id: found, or an error of its own (as a batch answers refused items). */
export const lookUp = write(async function lookUp(tx, accountId: string, ids: string[]) {
  const results = [];
  for (const id of ids) {
    const found = await tx.getCustomer(accountId, id);
    results.push(
      found
        ? { ok: true as const, name: found.name }
        : { ok: false as const, error: new ApiError('customer_not_found', `No customer '${id}'.`) },
    );
  }
  return results;
});

/**
 * Tx methods by name with their arguments, run in order in one named write; their results. For
 * what a test must see go through the store's own write path (the wake-up of onDeliveriesDue
 * after a commit), where ../../helpers/transaction.ts would write beside it.
 */
export const txSteps = write(async function txSteps(tx, steps: readonly (readonly [string, ...unknown[]])[]) {
  const methods = tx as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const results: unknown[] = [];
  for (const [name, ...args] of steps) results.push(await methods[name]?.apply(tx, args));
  return results;
});
