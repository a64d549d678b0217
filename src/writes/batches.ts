// The batch endpoints' transactions (docs/api.md, "Batches"): every item applied in order, as
// its single call would apply it, in one transaction with one commit. They run where the writes
// run (store.run) and return the answer's JSON text, which an Idempotency-Key stores with them.
import { checkMetadata, type Metadata, mergeMetadata } from '../domain/customers.ts';
import { ApiError, idempotencyInProgress } from '../domain/errors.ts';
import { type EventRecord, event } from '../domain/events.ts';
import { nextTimestamp } from '../domain/time.ts';
import { customerJson, customerObject } from '../store/customer-json.ts';
import type { CustomerRecord, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { applyFactorUpdates, type FactorUpdate } from './factor-updates.ts';
import { healthScoreJson } from './score-json.ts';

/** An item as the route passes it on: checked and ready, or already refused (its result's JSON). */
export type Entry<T> = { item: T } | { result: string };

export interface CustomerUpsert {
  customerId: string;
  name?: string | undefined;
  email?: string | undefined;
  metadata?: Metadata | undefined;
}

/** An Idempotency-Key claim: the answer is stored in the batch's transaction. */
export type Claim = { key: string; claimedAt: number } | undefined;

/** Another writer created one of the batch's new customers after the batch read: run it again. */
export class CustomerTaken extends Error {
  override readonly name = 'CustomerTaken';
}

/** A refused item's result, as JSON text. */
export const refusedJson = (customerId: string | null, error: ApiError): string =>
  `{"customer_id":${JSON.stringify(customerId)},"status":${error.status},"error":${JSON.stringify(error.toBody().error)}}`;

export const customerBatch = write(
  import.meta.url,
  async function customerBatch(
    tx: Tx,
    accountId: string,
    entries: readonly Entry<CustomerUpsert>[],
    claim: Claim,
    now: number,
  ): Promise<string> {
    const ids = [...new Set(entries.flatMap((e) => ('item' in e ? [e.item.customerId] : [])))];
    const current = await tx.customersForUpdate(accountId, ids);
    const created = new Set<string>();
    const touched = new Set<string>();
    const events: EventRecord[] = [];
    const results = entries.map((entry) => {
      if ('result' in entry) return entry.result;
      const u = entry.item;
      try {
        const before = current.get(u.customerId);
        const next = before ? updated(before, u, now) : fresh(u, now);
        current.set(u.customerId, next);
        touched.add(u.customerId);
        if (!before) created.add(u.customerId);
        const type = before ? 'customer.updated' : 'customer.created';
        events.push(event(type, customerObject(next), next.updatedAt));
        return `{"customer_id":${JSON.stringify(u.customerId)},"status":${before ? 200 : 201},"customer":${customerJson(next)}}`;
      } catch (error) {
        if (error instanceof ApiError) return refusedJson(u.customerId, error);
        throw error;
      }
    });
    const inserts: CustomerRecord[] = [];
    const updates: CustomerRecord[] = [];
    for (const id of touched) (created.has(id) ? inserts : updates).push(current.get(id) as CustomerRecord);
    const taken = await tx.saveCustomers(accountId, inserts, updates);
    if (taken.length > 0) throw new CustomerTaken(`customers created meanwhile: ${taken.length}`);
    await tx.insertEvents(accountId, events);
    const body = `{"results":[${results.join(',')}]}`;
    await recordAnswer(tx, accountId, claim, body);
    return body;
  },
);

/** A customer that does not exist yet, as POST /api/customers makes it. */
function fresh(u: CustomerUpsert, now: number): CustomerRecord {
  for (const field of ['name', 'email'] as const) {
    if (u[field] === undefined) {
      throw new ApiError('parameter_missing', `'${field}' is required to create a customer.`, field);
    }
  }
  const metadata = mergeMetadata({}, u.metadata ?? {});
  checkMetadata(metadata);
  return {
    id: u.customerId,
    name: u.name as string,
    email: u.email as string,
    metadata,
    createdAt: now,
    updatedAt: now,
  };
}

/** An existing customer changed as PATCH /api/customers/:id changes it. */
function updated(before: CustomerRecord, u: CustomerUpsert, now: number): CustomerRecord {
  if (u.name === undefined && u.email === undefined && u.metadata === undefined) {
    throw new ApiError('parameter_missing', 'Supply at least one parameter to change.');
  }
  const metadata = u.metadata ? mergeMetadata(before.metadata, u.metadata) : before.metadata;
  checkMetadata(metadata);
  // Field by field: the stored metadata text of `before` must not travel along.
  return {
    id: before.id,
    name: u.name ?? before.name,
    email: u.email ?? before.email,
    metadata,
    createdAt: before.createdAt,
    updatedAt: nextTimestamp(now, before.updatedAt),
  };
}

export const scoreBatch = write(
  import.meta.url,
  async function scoreBatch(
    tx: Tx,
    accountId: string,
    entries: readonly Entry<FactorUpdate>[],
    claim: Claim,
    now: number,
  ): Promise<string> {
    const updates = entries.flatMap((e) => ('item' in e ? [e.item] : []));
    const applied = await applyFactorUpdates(tx, accountId, updates, now);
    let next = 0;
    const results = entries.map((entry) => {
      if ('result' in entry) return entry.result;
      const r = applied[next++];
      const id = JSON.stringify(entry.item.customerId);
      if (!r) throw new Error('a batch item has no result');
      return r.ok
        ? `{"customer_id":${id},"status":200,"health_score":${healthScoreJson(r.record)}}`
        : refusedJson(entry.item.customerId, r.error);
    });
    const body = `{"results":[${results.join(',')}]}`;
    await recordAnswer(tx, accountId, claim, body);
    return body;
  },
);

async function recordAnswer(tx: Tx, accountId: string, claim: Claim, body: string): Promise<void> {
  if (!claim) return;
  if (!(await tx.recordIdempotentAnswer(accountId, claim.key, claim.claimedAt, { status: 200, body }))) {
    throw idempotencyInProgress();
  }
}
