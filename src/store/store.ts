// The Store: everything Vitals keeps. Every customer-facing query takes the account id;
// there is no "find by id" without it. Backends live in sqlite/ and postgres/ and are
// proven by one contract suite (test/store.contract.test.ts).

export interface Account {
  id: string;
  name: string;
  createdAt: number;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  accountName: string;
  /** The first characters of the key, enough for a person to recognise it. */
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
}

export interface CustomerRecord {
  id: string;
  name: string;
  email: string;
  metadata: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/** Reads that see only committed data (or, inside a transaction, the transaction's own writes). */
export interface Reader {
  getCustomer(accountId: string, id: string): Promise<CustomerRecord | null>;
  /** Customers by id ascending, byte-wise; `startingAfter` is an exclusive lower bound. */
  listCustomers(
    accountId: string,
    opts: { startingAfter?: string; limit: number },
  ): Promise<Page<CustomerRecord>>;
}

/** Writes happen only inside `Store.transaction`, so a change and its events commit together. */
export interface Tx extends Reader {
  /** Returns false (and writes nothing) when the id is taken in this account. */
  insertCustomer(accountId: string, customer: CustomerRecord): Promise<boolean>;
  updateCustomer(accountId: string, customer: CustomerRecord): Promise<void>;
  /** Removes the customer with everything that belongs to it; false when there was none. */
  deleteCustomer(accountId: string, id: string): Promise<boolean>;
}

export interface Store extends Reader {
  readonly backend: 'sqlite' | 'postgres';
  /** Brings the schema to the latest version; safe when several processes start at once. */
  migrate(): Promise<number>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Runs `fn` atomically: all of its writes commit, or none do. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;

  // Accounts and keys: the administration surface of the CLI and the authentication lookup.
  ensureAccount(name: string, now: number): Promise<Account>;
  insertApiKey(key: {
    id: string;
    accountId: string;
    hash: string;
    prefix: string;
    createdAt: number;
  }): Promise<void>;
  /** The one lookup not scoped by account: it is how a request finds its account. */
  findApiKey(hash: string): Promise<{ keyId: string; accountId: string } | null>;
  listApiKeys(): Promise<ApiKeyRecord[]>;
  countActiveApiKeys(): Promise<number>;
  revokeApiKey(id: string, now: number): Promise<boolean>;
}
