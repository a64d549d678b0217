// A customer's writes, one rule each, for the routes (http/customers.ts) and the batch
// (./batches.ts) alike: what a new customer is, how a change applies (metadata merges; a null
// removes a key), and the event each write records. Stamped with the caller's `now`. The routes'
// writes run whole where the writes run (store.run; docs/architecture.md, "A write").

import { customerJson, customerObject } from '../api/customers.ts';
import {
  arrCentsOf,
  BOOK_FIELDS,
  checkMetadata,
  type Lifecycle,
  type Metadata,
  mergeMetadata,
  RENEWAL_MAX_MS,
} from '../domain/customers.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { event } from '../domain/events.ts';
import { INSTANT_RULE, nextTimestamp, parseInstant } from '../domain/time.ts';
import type { CustomerRecord, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { type Claim, recordAnswer } from './answers.ts';
import { actOn } from './playbooks.ts';

/**
 * A customer as given: its id, and for a new customer its name and email. The book fields as the
 * API names them (docs/api.md, "Customers"): null clears one, absent leaves it.
 */
export interface CustomerInput {
  customerId: string;
  name?: string | undefined;
  email?: string | undefined;
  owner?: string | null | undefined;
  arr?: number | null | undefined;
  renewal_at?: string | null | undefined;
  lifecycle?: Lifecycle | undefined;
  parent_id?: string | null | undefined;
  metadata?: Metadata | undefined;
}

type Book = Pick<CustomerRecord, 'owner' | 'arrCents' | 'renewalAt' | 'lifecycle' | 'parentId'>;

/** The book fields after the input: each given one as stored (null clears it), the others as they were. */
function bookAfter(before: Book, input: CustomerInput): Book {
  let renewalAt = before.renewalAt;
  if (input.renewal_at !== undefined) {
    renewalAt = input.renewal_at === null ? null : parseInstant(input.renewal_at);
    if (renewalAt === null && input.renewal_at !== null) {
      throw new ApiError('parameter_invalid', `'renewal_at' must be ${INSTANT_RULE}.`, 'renewal_at');
    }
    if (renewalAt !== null && !(renewalAt >= 0 && renewalAt < RENEWAL_MAX_MS)) {
      throw new ApiError(
        'parameter_invalid',
        "'renewal_at' must be in the years 1970 to 9999.",
        'renewal_at',
      );
    }
  }
  return {
    owner: input.owner === undefined ? before.owner : input.owner,
    arrCents: input.arr === undefined ? before.arrCents : input.arr === null ? null : arrCentsOf(input.arr),
    renewalAt,
    lifecycle: input.lifecycle ?? before.lifecycle,
    parentId: input.parent_id === undefined ? before.parentId : input.parent_id,
  };
}

const NO_BOOK: Book = { owner: null, arrCents: null, renewalAt: null, lifecycle: 'active', parentId: null };

/** Whether the input sets a parent: the change takes the account's tree lock (docs/api.md, "Customers"). */
export const setsParent = (input: CustomerInput): boolean =>
  input.parent_id !== undefined && input.parent_id !== null;

/** A customer's place in its account's tree, as a write sees it (stored, or changed earlier in a batch). */
export interface Tree {
  /** The customer's parent (null: a root), or undefined when there is no such customer. */
  parentOf(id: string): Promise<string | null | undefined>;
  /** The customers whose parent is one of these. */
  childrenOf(ids: readonly string[]): Promise<string[]>;
}

/** The tree as stored. */
export const storedTree = (tx: Tx, accountId: string): Tree => ({
  parentOf: async (id) => {
    const found = await tx.customerParents(accountId, [id]);
    return found.has(id) ? (found.get(id) as string | null) : undefined;
  },
  childrenOf: (ids) => tx.customerChildren(accountId, ids),
});

/** The longest chain of customers, root included (docs/api.md, "Customers"). */
export const MAX_CHAIN = 5;

const badParent = (message: string) => new ApiError('parameter_invalid', message, 'parent_id');

/**
 * Refuses `parentId` as the parent of `id` unless it is another customer of the account, not one
 * of `id`'s descendants, and the chain through both stays within MAX_CHAIN customers.
 */
export async function checkParent(tree: Tree, id: string, parentId: string): Promise<void> {
  if (parentId === id) throw badParent('A customer cannot be its own parent.');
  // The parent and its ancestors, up to the root; a cycle cannot be stored, the bound is a guard.
  let above = 0;
  for (let at: string | null = parentId; at !== null; ) {
    if (at === id) throw badParent(`'${parentId}' is a descendant of '${id}': the tree would have a cycle.`);
    const up = await tree.parentOf(at);
    if (up === undefined) {
      if (at === parentId) throw badParent(`There is no customer with id '${parentId}'.`);
      break;
    }
    if (++above >= MAX_CHAIN) throw tooDeep();
    at = up;
  }
  // The customer and its descendants, level by level.
  let level = [id];
  for (let height = 1; ; height++) {
    if (above + height > MAX_CHAIN) throw tooDeep();
    level = await tree.childrenOf(level);
    if (level.length === 0) return;
  }
}

const tooDeep = () => badParent(`A chain of parents holds at most ${MAX_CHAIN} customers, root included.`);

/** A customer that does not exist yet, as POST /api/customers makes it. */
export function newCustomer(input: CustomerInput, now: number): CustomerRecord {
  for (const field of ['name', 'email'] as const) {
    if (input[field] === undefined) {
      throw new ApiError('parameter_missing', `'${field}' is required to create a customer.`, field);
    }
  }
  const metadata = mergeMetadata({}, input.metadata ?? {});
  checkMetadata(metadata);
  return {
    id: input.customerId,
    name: input.name as string,
    email: input.email as string,
    ...bookAfter(NO_BOOK, input),
    metadata,
    createdAt: now,
    updatedAt: now,
  };
}

/** An existing customer changed as PATCH /api/customers/:id changes it. */
export function changedCustomer(before: CustomerRecord, change: CustomerInput, now: number): CustomerRecord {
  const fields = ['name', 'email', ...BOOK_FIELDS, 'metadata'] as const;
  if (fields.every((field) => change[field] === undefined)) {
    throw new ApiError('parameter_missing', 'Supply at least one parameter to change.');
  }
  const metadata = change.metadata ? mergeMetadata(before.metadata, change.metadata) : before.metadata;
  checkMetadata(metadata);
  // Field by field: the stored metadata text of `before` must not travel along.
  return {
    id: before.id,
    name: change.name ?? before.name,
    email: change.email ?? before.email,
    ...bookAfter(before, change),
    metadata,
    createdAt: before.createdAt,
    updatedAt: nextTimestamp(now, before.updatedAt),
  };
}

/**
 * POST /api/customers: creates the customer with its customer.created event; the answer's text
 * (201), stored for the request's Idempotency-Key claim. 409 customer_exists if the id is taken.
 */
export const createCustomer = write(async function createCustomer(
  tx: Tx,
  accountId: string,
  input: CustomerInput,
  claim: Claim,
  now: number,
): Promise<string> {
  if (setsParent(input)) tx.lockCustomerTree(accountId);
  const customer = newCustomer(input, now);
  if (customer.parentId !== null)
    await checkParent(storedTree(tx, accountId), customer.id, customer.parentId);
  if (!(await tx.insertCustomer(accountId, customer))) {
    throw new ApiError(
      'customer_exists',
      `A customer with id '${customer.id}' already exists.`,
      'customer_id',
    );
  }
  await tx.insertEvents(
    accountId,
    await actOn(tx, accountId, [event('customer.created', customerObject(customer), now)], now),
  );
  const body = customerJson(customer);
  await recordAnswer(tx, accountId, claim, body, 201);
  return body;
});

/** PATCH /api/customers/:id: changes the customer, with its customer.updated event; 404 customer_not_found. */
export const updateCustomer = write(async function updateCustomer(
  tx: Tx,
  accountId: string,
  change: CustomerInput,
  now: number,
): Promise<CustomerRecord> {
  if (setsParent(change)) tx.lockCustomerTree(accountId);
  const current = await tx.getCustomer(accountId, change.customerId);
  if (!current) throw notFound.customer(change.customerId);
  const next = changedCustomer(current, change, now);
  if (next.parentId !== null && next.parentId !== current.parentId) {
    await checkParent(storedTree(tx, accountId), next.id, next.parentId);
  }
  await tx.updateCustomer(accountId, next);
  const updated = [event('customer.updated', customerObject(next), next.updatedAt)];
  await tx.insertEvents(accountId, await actOn(tx, accountId, updated, next.updatedAt));
  return next;
});

/**
 * DELETE /api/customers/:id: deletes the customer with its score and history, and records
 * customer.deleted; 404 customer_not_found.
 */
export const deleteCustomer = write(async function deleteCustomer(
  tx: Tx,
  accountId: string,
  customerId: string,
  now: number,
): Promise<{ id: string; deleted: true }> {
  const answer = { id: customerId, deleted: true as const };
  // Its children become roots (docs/api.md, "Customers"), each a change with its event; read
  // under the account's lock, as a change of parent checks, so no child is added meanwhile.
  const events = [];
  for (const childId of await tx.customerChildren(accountId, [customerId])) {
    const child = await tx.getCustomer(accountId, childId);
    if (!child) continue;
    const next = changedCustomer(child, { customerId: childId, parent_id: null }, now);
    await tx.updateCustomer(accountId, next);
    events.push(event('customer.updated', customerObject(next), next.updatedAt));
  }
  if (!(await tx.deleteCustomer(accountId, customerId))) throw notFound.customer(customerId);
  await tx.insertEvents(accountId, [...events, event('customer.deleted', answer, now)]);
  return answer;
});
