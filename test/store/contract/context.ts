// What every section of the store contract gets: the backend's store and fixtures to fill it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { TestContext } from 'node:test';
import type { EventRecord, EventType } from '../../../src/domain/events.ts';
import { event } from '../../../src/domain/events.ts';
import { newId } from '../../../src/domain/ids.ts';
import { DEFAULT_THRESHOLDS, statusFor } from '../../../src/domain/scoring.ts';
import type { CustomerRecord, ScoreRecord, Store, WebhookRecord } from '../../../src/store/store.ts';
import { type Backend, createTestDatabase, type TestDatabase } from '../../helpers/stores.ts';
import { transaction } from '../../helpers/transaction.ts';
import { txSteps } from './writes.ts';

export interface Isolated {
  db: TestDatabase;
  store: Store;
  account(): Promise<string>;
}

export interface ContractContext {
  backend: Backend;
  /** The suite's store: one database shared by the tests, each working in an account of its own. */
  store(): Store;
  /** A new account in the suite's store. */
  account(): Promise<string>;
  /** A fresh, migrated database of the test's own (the delivery queue looks across accounts). */
  isolated(t: TestContext): Promise<Isolated>;
  /** A fresh database with no schema yet, removed after the test. */
  database(t: TestContext): Promise<TestDatabase>;
}

/** A fixed instant, so timestamps in assertions are exact. */
export const T0 = Date.UTC(2030, 0, 1);

export const newAccount = async (store: Store): Promise<string> =>
  (await store.ensureAccount(`acct-${randomUUID()}`, T0)).id;

export async function emptyDatabase(backend: Backend, t: TestContext): Promise<TestDatabase> {
  const db = await createTestDatabase(backend);
  t.after(() => db.drop());
  return db;
}

export async function isolatedDatabase(backend: Backend, t: TestContext): Promise<Isolated> {
  const db = await emptyDatabase(backend, t);
  const store = db.open();
  await store.migrate();
  return { db, store, account: () => newAccount(store) };
}

export const customer = (id: string, extra: Partial<CustomerRecord> = {}): CustomerRecord => ({
  id,
  name: `Customer ${id}`,
  email: 'someone@example.com',
  owner: null,
  arrCents: null,
  renewalAt: null,
  lifecycle: 'active',
  parentId: null,
  metadata: {},
  createdAt: T0,
  updatedAt: T0,
  ...extra,
});

export const score = (customerId: string, value: number, version = 1, extra: Partial<ScoreRecord> = {}) => {
  const record: ScoreRecord = {
    customerId,
    score: value,
    status: statusFor(value, DEFAULT_THRESHOLDS),
    factors: { usage: value },
    version,
    updatedAt: T0 + version,
    ...extra,
  };
  return record;
};

export const webhook = (extra: Partial<WebhookRecord> = {}): WebhookRecord => ({
  id: newId.webhook(),
  url: 'https://receiver.example.com/hooks',
  events: ['customer.created'],
  description: null,
  format: 'standard',
  secret: newId.webhookSecret(),
  previousSecret: null,
  previousSecretExpiresAt: null,
  enabled: true,
  disabledReason: null,
  createdAt: T0,
  updatedAt: T0,
  ...extra,
});

export const anEvent = (type: EventType = 'customer.created', at = T0, data: Record<string, unknown> = {}) =>
  event(type, { id: 'c1', ...data }, at);

/** Inserts the customers (and optionally events) in one transaction. */
export async function seedCustomers(store: Store, accountId: string, ids: string[]): Promise<void> {
  await transaction(store, async (tx) => {
    for (const id of ids) await tx.insertCustomer(accountId, customer(id));
  });
}

/** Inserts the events with a write of the store's own path: a commit that makes deliveries due wakes its listeners. */
export async function seedEvents(store: Store, accountId: string, events: EventRecord[]): Promise<void> {
  await store.run(txSteps, [['insertEvents', accountId, events]]);
}

/**
 * A customer as plain data. A backend may also hand over `metadataJson`, the stored text of
 * the metadata; when it does, that text must be exactly the metadata as written.
 */
export function plainCustomer(c: CustomerRecord | null): CustomerRecord | null {
  if (!c) return null;
  if (c.metadataJson !== undefined) assert.equal(c.metadataJson, JSON.stringify(c.metadata));
  const { id, name, email, owner, arrCents, renewalAt, lifecycle, parentId, metadata, createdAt, updatedAt } =
    c;
  return { id, name, email, owner, arrCents, renewalAt, lifecycle, parentId, metadata, createdAt, updatedAt };
}

/** A score as plain data; a backend's `factorsJson` must be exactly the factors as written. */
export function plainScore(s: ScoreRecord | null): ScoreRecord | null {
  if (!s) return null;
  if (s.factorsJson !== undefined) assert.equal(s.factorsJson, JSON.stringify(s.factors));
  const { customerId, score, status, factors, version, updatedAt } = s;
  return { customerId, score, status, factors, version, updatedAt };
}

/** Byte-wise order of UTF-8, the order both backends promise for ids. */
export const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Pending deliveries in the whole store, or of one account: the store's backlog by account, summed. */
export async function pendingDeliveries(store: Store, accountId?: string): Promise<number> {
  const rows = await store.backlogByAccount();
  return rows
    .filter((r) => accountId === undefined || r.accountId === accountId)
    .reduce((n, r) => n + r.pending, 0);
}
