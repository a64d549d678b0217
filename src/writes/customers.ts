// A customer's writes, one rule each, for the routes (http/customers.ts) and the batch
// (./batches.ts) alike: what a new customer is, how a change applies (metadata merges; a null
// removes a key), and the event each write records. Stamped with the caller's `now`. The routes'
// writes run whole where the writes run (store.run; docs/architecture.md, "A write").

import { customerJson, customerObject } from '../api/customers.ts';
import { checkMetadata, type Metadata, mergeMetadata } from '../domain/customers.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { event } from '../domain/events.ts';
import { nextTimestamp } from '../domain/time.ts';
import type { CustomerRecord, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { type Claim, recordAnswer } from './answers.ts';

/** A customer as given: its id, and for a new customer its name and email. */
export interface CustomerInput {
  customerId: string;
  name?: string | undefined;
  email?: string | undefined;
  metadata?: Metadata | undefined;
}

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
    metadata,
    createdAt: now,
    updatedAt: now,
  };
}

/** An existing customer changed as PATCH /api/customers/:id changes it. */
export function changedCustomer(before: CustomerRecord, change: CustomerInput, now: number): CustomerRecord {
  if (change.name === undefined && change.email === undefined && change.metadata === undefined) {
    throw new ApiError('parameter_missing', 'Supply at least one parameter to change.');
  }
  const metadata = change.metadata ? mergeMetadata(before.metadata, change.metadata) : before.metadata;
  checkMetadata(metadata);
  // Field by field: the stored metadata text of `before` must not travel along.
  return {
    id: before.id,
    name: change.name ?? before.name,
    email: change.email ?? before.email,
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
  const customer = newCustomer(input, now);
  if (!(await tx.insertCustomer(accountId, customer))) {
    throw new ApiError(
      'customer_exists',
      `A customer with id '${customer.id}' already exists.`,
      'customer_id',
    );
  }
  await tx.insertEvents(accountId, [event('customer.created', customerObject(customer), now)]);
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
  const current = await tx.getCustomer(accountId, change.customerId);
  if (!current) throw notFound.customer(change.customerId);
  const next = changedCustomer(current, change, now);
  await tx.updateCustomer(accountId, next);
  await tx.insertEvents(accountId, [event('customer.updated', customerObject(next), next.updatedAt)]);
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
  if (!(await tx.deleteCustomer(accountId, customerId))) throw notFound.customer(customerId);
  await tx.insertEvents(accountId, [event('customer.deleted', answer, now)]);
  return answer;
});
