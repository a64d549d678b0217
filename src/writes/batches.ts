// The batch endpoints' transactions (docs/api.md, "Batches"): every item applied in order, as
// its single call would apply it, in one transaction with one commit. They run where the writes
// run (store.run) and return the answer's JSON text, which an Idempotency-Key stores with them.

import { customerJson, customerObject } from '../api/customers.ts';
import { healthScoreJson } from '../api/health-scores.ts';
import { ApiError } from '../domain/errors.ts';
import { type EventRecord, event } from '../domain/events.ts';
import type { CustomerRecord, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { type Claim, recordAnswer } from './answers.ts';
import {
  type CustomerInput,
  changedCustomer,
  checkParent,
  newCustomer,
  setsParent,
  storedTree,
  type Tree,
} from './customers.ts';
import { applyFactorUpdates, type FactorUpdate } from './factor-updates.ts';
import { actOn } from './playbooks.ts';

/** An item as the route passes it on: checked and ready, or already refused (its result's JSON). */
export type Entry<T> = { item: T } | { result: string };

/** A batch item: a new customer, or a change to an existing one. */
export type CustomerUpsert = CustomerInput;

/** Another writer created one of the batch's new customers after the batch read: run it again. */
export class CustomerTaken extends Error {
  override readonly name = 'CustomerTaken';
}

/** A refused item's result, as JSON text. */
export const refusedJson = (customerId: string | null, error: ApiError): string =>
  `{"customer_id":${JSON.stringify(customerId)},"status":${error.status},"error":${JSON.stringify(error.toBody().error)}}`;

export const customerBatch = write(async function customerBatch(
  tx: Tx,
  accountId: string,
  entries: readonly Entry<CustomerUpsert>[],
  claim: Claim,
  now: number,
): Promise<string> {
  const items = entries.flatMap((e) => ('item' in e ? [e.item] : []));
  // A change of parent is checked against the tree as the batch leaves it so far: under the
  // account's tree lock, taken before any other read (docs/api.md, "Customers").
  if (items.some(setsParent)) tx.lockCustomerTree(accountId);
  const ids = [...new Set(items.map((item) => item.customerId))];
  const current = await tx.customersForUpdate(accountId, ids);
  const stored = storedTree(tx, accountId);
  const tree: Tree = {
    parentOf: async (id) =>
      current.has(id) ? (current.get(id) as CustomerRecord).parentId : stored.parentOf(id),
    childrenOf: async (parents) => {
      const wanted = new Set(parents);
      const children = (await stored.childrenOf(parents)).filter((id) => !current.has(id));
      for (const [id, c] of current) if (c.parentId !== null && wanted.has(c.parentId)) children.push(id);
      return children;
    },
  };
  const created = new Set<string>();
  const touched = new Set<string>();
  const events: EventRecord[] = [];
  const results: string[] = [];
  for (const entry of entries) {
    if ('result' in entry) {
      results.push(entry.result);
      continue;
    }
    const u = entry.item;
    try {
      const before = current.get(u.customerId);
      const next = before ? changedCustomer(before, u, now) : newCustomer(u, now);
      if (next.parentId !== null && next.parentId !== before?.parentId) {
        await checkParent(tree, next.id, next.parentId);
      }
      current.set(u.customerId, next);
      touched.add(u.customerId);
      if (!before) created.add(u.customerId);
      const type = before ? 'customer.updated' : 'customer.created';
      events.push(event(type, customerObject(next), next.updatedAt));
      results.push(
        `{"customer_id":${JSON.stringify(u.customerId)},"status":${before ? 200 : 201},"customer":${customerJson(next)}}`,
      );
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      results.push(refusedJson(u.customerId, error));
    }
  }
  const inserts: CustomerRecord[] = [];
  const updates: CustomerRecord[] = [];
  for (const id of touched) (created.has(id) ? inserts : updates).push(current.get(id) as CustomerRecord);
  const taken = await tx.saveCustomers(accountId, inserts, updates);
  if (taken.length > 0) throw new CustomerTaken(`customers created meanwhile: ${taken.length}`);
  await tx.insertEvents(accountId, await actOn(tx, accountId, events, now));
  const body = `{"results":[${results.join(',')}]}`;
  await recordAnswer(tx, accountId, claim, body);
  return body;
});

export const scoreBatch = write(async function scoreBatch(
  tx: Tx,
  accountId: string,
  entries: readonly Entry<FactorUpdate>[],
  claim: Claim,
  now: number,
): Promise<string> {
  return answerItems(
    tx,
    accountId,
    entries,
    claim,
    // One request's items carry no instant of their own: they all stand at `now`, so the same
    // customer named twice is the same customer at the same instant, and makes one version.
    (items) => applyFactorUpdates(tx, accountId, items, now, true),
    (item, record) =>
      `{"customer_id":${JSON.stringify(item.customerId)},"status":200,"health_score":${healthScoreJson(record)}}`,
  );
});

/**
 * Applies a request's items with those for the same `key` (a customer and an instant) merged
 * into the first one's place, so each such group makes one version and one set of events
 * (docs/api.md, "One customer, one instant, one version"); each item gets its group's result.
 */
export async function appliedTogether<T, R>(
  items: readonly T[],
  key: (item: T) => string,
  merge: (into: T, item: T) => T,
  apply: (merged: T[]) => Promise<R[]>,
): Promise<R[]> {
  const merged: T[] = [];
  const at = new Map<string, number>();
  const into = items.map((item) => {
    const k = key(item);
    const i = at.get(k);
    if (i === undefined) {
      at.set(k, merged.length);
      merged.push(item);
      return merged.length - 1;
    }
    merged[i] = merge(merged[i] as T, item);
    return i;
  });
  const results = await apply(merged);
  return into.map((i) => results[i] as R);
}

/**
 * A batch of customers' items answered in order: the checked ones applied together, each
 * result (or a refusal found before, as it came) in its entry's place, the answer recorded for
 * the request's Idempotency-Key claim; its text returned.
 */
export async function answerItems<T extends { customerId: string }, R>(
  tx: Tx,
  accountId: string,
  entries: readonly Entry<T>[],
  claim: Claim,
  apply: (items: T[]) => Promise<({ ok: true; record: R } | { ok: false; error: ApiError })[]>,
  answer: (item: T, record: R) => string,
): Promise<string> {
  const applied = await apply(entries.flatMap((e) => ('item' in e ? [e.item] : [])));
  let next = 0;
  const results = entries.map((entry) => {
    if ('result' in entry) return entry.result;
    const r = applied[next++];
    if (!r) throw new Error('a batch item has no result');
    return r.ok ? answer(entry.item, r.record) : refusedJson(entry.item.customerId, r.error);
  });
  const body = `{"results":[${results.join(',')}]}`;
  await recordAnswer(tx, accountId, claim, body);
  return body;
}
